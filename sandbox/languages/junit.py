from sandbox.languages.base import Language
from sandbox.languages.java import JAVA, JAVAC, JVM_FAST_START

_CONSOLE = "/usr/share/java/junit-platform-console-standalone.jar"  # JUnit 5 (Jupiter and Vintage engines)

# SandboxFusion's `junit`: the program holds the classes and their @Test methods, in the file of its public class;
# JUnit's console launcher finds and runs every test and reports each (--details=tree).
JUNIT = Language(
    name="junit",
    source_file=JAVA.source_file,
    main_pattern=JAVA.main_pattern,
    compile=(*JAVAC, "-cp", _CONSOLE, "-d", ".", "{source}"),  # java's class-data archive, when java is set up
    run=(
        "/usr/bin/java", "-ea", "-Xmx{memory_mb}m", "-Xss64m", *JVM_FAST_START, "-jar", _CONSOLE,
        "--class-path", ".", "--scan-class-path", "--disable-banner", "--disable-ansi-colors", "--details=tree",
    ),
    address_space_limit=False,
    compile_address_space_limit=False,
    apt=(*JAVA.apt, "junit5"),
    version=JAVA.version,
    start_s=0.5,
    needs=(_CONSOLE,),
    report="junit",
)  # fmt: skip
