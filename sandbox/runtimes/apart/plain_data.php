// Messages between a program suite's tests and the program, each in a process of its own (sandbox/runner.py
// run_suite_apart): its length (8 bytes, little-endian), then the value as JSON (arrays as PHP decodes them, floats
// keeping their fraction: 1.0 stays a float). Plain data only: objects arrive as arrays; NAN, INF and resources
// cannot be sent. Synchronous: a test's call waits for its reply.
final class PlainData
{
    const MESSAGE_LIMIT = 1 << 30;

    public static function send($stream, $value): void
    {
        $body = json_encode($value, JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR, 1000);
        $data = pack('P', strlen($body)) . $body;
        while ($data !== '') {
            $written = fwrite($stream, $data);
            if ($written === false || $written === 0) {
                throw new RuntimeException('the other process is gone');
            }
            $data = substr($data, $written);
        }
        fflush($stream);
    }

    private static function readExactly($stream, int $size): ?string
    {
        $data = '';
        while (strlen($data) < $size) {
            $chunk = fread($stream, min($size - strlen($data), 1 << 20));
            if ($chunk === false || $chunk === '') {
                return null;
            }
            $data .= $chunk;
        }
        return $data;
    }

    // The next message, or null when the other side closed its end (or sent something cut, too big or not JSON).
    public static function receive($stream)
    {
        $head = self::readExactly($stream, 8);
        if ($head === null) {
            return null;
        }
        $size = unpack('P', $head)[1];
        if ($size > self::MESSAGE_LIMIT) {
            return null;
        }
        $body = $size === 0 ? '' : self::readExactly($stream, $size);
        if ($body === null) {
            return null;
        }
        try {
            return json_decode($body, true, 1000, JSON_THROW_ON_ERROR);
        } catch (JsonException $e) {
            return null;
        }
    }
}
