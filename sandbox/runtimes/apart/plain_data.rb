# Messages between a program suite's tests and the program, each in a process of its own (sandbox/runner.py
# run_suite_apart): its length (8 bytes, little-endian), then the value as JSON, tagged where JSON has no such
# value: {"$h": [[key, value], ...]} a Hash, {"$s": name} a Symbol, {"$f": "NaN"} a float JSON cannot write. Plain
# data only: any other object cannot be sent. Synchronous: a test's call waits for its reply.
require 'json'

module PlainData
  MESSAGE_LIMIT = 1 << 30
  FLOATS = {'NaN' => Float::NAN, 'Infinity' => Float::INFINITY, '-Infinity' => -Float::INFINITY}.freeze

  class NotPlainData < StandardError; end

  def self.encoded(value, depth = 0)
    raise NotPlainData, 'nested too deep' if depth > 1000
    case value
    when nil, true, false, Integer, String then value
    when Float then value.finite? ? value : {'$f' => value.nan? ? 'NaN' : (value.positive? ? 'Infinity' : '-Infinity')}
    when Symbol then {'$s' => value.to_s}
    when Array then value.map { |item| encoded(item, depth + 1) }
    when Hash then {'$h' => value.map { |key, item| [encoded(key, depth + 1), encoded(item, depth + 1)] }}
    else raise NotPlainData, "a #{value.class} is not plain data"
    end
  end

  def self.decoded(value)
    case value
    when Array then value.map { |item| decoded(item) }
    when Hash
      if value.key?('$h') then value['$h'].to_h { |key, item| [decoded(key), decoded(item)] }
      elsif value.key?('$s') then value['$s'].to_s.to_sym
      elsif value.key?('$f') then FLOATS.fetch(value['$f'])
      else raise NotPlainData, 'an untagged object'
      end
    else value
    end
  end

  def self.send_message(io, value)
    body = JSON.generate(encoded(value))
    io.write([body.bytesize].pack('Q<'), body)
    io.flush
  end

  # The next message, or nil when the other side closed its end (or sent something cut or too big).
  def self.receive(io)
    head = io.read(8)
    return nil if head.nil? || head.bytesize < 8
    size = head.unpack1('Q<')
    return nil if size > MESSAGE_LIMIT
    body = io.read(size)
    return nil if body.nil? || body.bytesize < size
    decoded(JSON.parse(body.force_encoding('UTF-8'), max_nesting: 1000))
  end
end
