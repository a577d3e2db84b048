// The program's process of a PHP program suite run apart from its tests (sandbox/runner.py run_suite_apart; after
// plain_data.php): the program runs as the main script, then answers the tests' requests on fd 3 with replies on fd
// 4 until the tests' process is done. Its functions are called here; what they return or throw goes back as data.
final class JudgeProgram
{
    public static function answer(array $functions, $request): array
    {
        if (is_array($request) && isset($request['names']) && is_array($request['names'])) {
            $defined = [];
            foreach ($request['names'] as $name) {
                if (is_string($name) && in_array(strtolower($name), $functions, true)) {
                    $defined[$name] = ['function' => true];
                }
            }
            return ['defined' => (object) $defined];
        }
        try {
            $name = $request['call'] ?? '';
            if (!in_array(strtolower((string) $name), $functions, true)) {
                throw new Error("the program has no function $name");
            }
            return ['value' => $name(...array_values((array) ($request['args'] ?? [])))];
        } catch (Throwable $e) {
            return ['error' => ['class' => get_class($e), 'message' => $e->getMessage()]];
        }
    }

    public static function serve(array $functions): void
    {
        $requests = fopen('php://fd/3', 'rb');
        $replies = fopen('php://fd/4', 'wb');
        while (($request = PlainData::receive($requests)) !== null) {
            $reply = self::answer($functions, $request);
            try {
                PlainData::send($replies, $reply);
            } catch (JsonException $e) {
                $message = 'the program answered with what is not plain data: ' . $e->getMessage();
                PlainData::send($replies, ['error' => ['class' => 'TypeError', 'message' => $message]]);
            }
        }
    }
}

// The program at the top level, as `php main.php` runs it (its globals are globals).
$judge_before = get_defined_functions()['user'];
$argv = array_slice($argv, 1);
$argc = count($argv);
$_SERVER['argv'] = $argv;
require realpath($argv[0]);
JudgeProgram::serve(array_values(array_diff(get_defined_functions()['user'], $judge_before)));
