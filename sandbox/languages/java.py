from sandbox.languages.base import Language

# JVM start-up flags for short programs (scala and kotlin_script start the JVM the same way).
JVM_FAST_START = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData")


JAVA = Language(
    name="java",
    source_file="{main}.java",
    # javac wants the file named after the public class, and java runs that class.
    main_pattern=r"public\s+(?:final\s+)?class\s+([A-Za-z_][A-Za-z0-9_]*)",
    compile=(
        "/usr/bin/javac",
        "-J-Xmx512m",
        *(f"-J{flag}" for flag in JVM_FAST_START),
        "-nowarn",
        "-d",
        ".",
        "{source}",
    ),
    run=("/usr/bin/java", "-Xmx{memory_mb}m", "-Xss64m", *JVM_FAST_START, "-cp", ".", "{main}"),
    address_space_limit=False,
    compile_address_space_limit=False,
    apt=("default-jdk-headless:/usr/bin/javac",),
    version=("/usr/bin/java", "-version"),
)
