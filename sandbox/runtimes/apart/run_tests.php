// The tests' process of a PHP program suite run apart from the program (sandbox/runner.py run_suite_apart; after
// plain_data.php). It reads the tests' code on stdin and runs it; the functions the tests call that neither they nor
// PHP define are the program's: asked for on fd 4, answered on fd 3, called there. fd 5 hears that they all ran.
final class JudgeTests
{
    private static $requests;
    private static $replies;

    public static function ask(array $request): array
    {
        PlainData::send(self::$requests, $request);
        $reply = PlainData::receive(self::$replies);
        if (!is_array($reply)) {
            throw new Exception('the program ended before its tests did');
        }
        return $reply;
    }

    public static function call(string $name, array $args)
    {
        $reply = self::ask(['call' => $name, 'args' => $args]);
        if (isset($reply['error'])) {
            throw new Exception('in the program: ' . (string) ($reply['error']['message'] ?? ''));
        }
        return $reply['value'] ?? null;
    }

    // Stubs for the names the tests call that neither they nor PHP define, where the program does.
    private static function defineProgramFunctions(string $code): void
    {
        preg_match_all('/\bfunction\s+&?\s*([A-Za-z_]\w*)/', $code, $declared);
        preg_match_all('/\b([A-Za-z_]\w*)\s*\(/', $code, $called);
        $declared = array_map('strtolower', $declared[1]);
        $wanted = array_values(array_filter(array_unique($called[1]), function ($name) use ($declared) {
            return !function_exists($name) && !in_array(strtolower($name), $declared, true);
        }));
        $defined = self::ask(['names' => $wanted])['defined'] ?? [];
        foreach ($wanted as $name) {
            if (is_array($defined) && isset($defined[$name])) {
                eval("function $name(...\$args) { return JudgeTests::call('$name', \$args); }");
            }
        }
    }

    // The tests' code, with the program's functions it calls defined.
    public static function prepare(): string
    {
        self::$replies = fopen('php://fd/3', 'rb');
        self::$requests = fopen('php://fd/4', 'wb');
        $code = stream_get_contents(STDIN);
        self::defineProgramFunctions($code);
        return preg_replace('/^\s*<\?php/', '', $code);
    }

    public static function done(): void
    {
        $said = fopen('php://fd/5', 'wb');
        fwrite($said, 'done');
        fclose($said);
    }
}

// The tests at the top level, as they would run after the program (their globals are globals).
eval(JudgeTests::prepare());
JudgeTests::done();
