from sandbox.languages.base import Language

# JVM start-up flags for short programs (scala and kotlin_script start the JVM the same way).
JVM_FAST_START = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData")
JAVATUPLES = "/usr/share/java/javatuples.jar"  # org.javatuples, which MultiPL-E's Java prompts import


JAVA = Language(
    name="java",
    source_file="{main}.java",
    # javac wants the file named after the public class, and java runs that class.
    # The public class; else the class whose body has `static void main` (MultiPL-E's `class Problem`).
    main_pattern=(
        r"public\s+(?:final\s+)?class\s+([A-Za-z_]\w*)",
        r"\bclass\s+([A-Za-z_]\w*)(?=(?:(?!\bclass\b)[\s\S])*?\bstatic\s+void\s+main\s*\()",
    ),
    compile=(
        "/usr/bin/javac",
        "-J-Xmx512m",
        *(f"-J{flag}" for flag in JVM_FAST_START),
        "-nowarn",
        "-cp",
        f".:{JAVATUPLES}",
        "-d",
        ".",
        "{source}",
    ),
    # -ea: a failing `assert` fails (MultiPL-E's Java tests are asserts in main).
    run=("/usr/bin/java", "-ea", "-Xmx{memory_mb}m", "-Xss64m", *JVM_FAST_START, "-cp", f".:{JAVATUPLES}", "{main}"),
    address_space_limit=False,
    compile_address_space_limit=False,
    apt=("default-jdk-headless:/usr/bin/javac", "libjavatuples-java"),
    needs=(JAVATUPLES,),
    version=("/usr/bin/java", "-version"),
    tests_done='System.out.println("{marker}"); System.out.flush();',
    tests_done_at="block",
)
