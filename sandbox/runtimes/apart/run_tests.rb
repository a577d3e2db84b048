# The tests' process of a Ruby program suite run apart from the program (sandbox/runner.py run_suite_apart; after
# plain_data.rb). It reads the tests' code on stdin and runs it; the methods the tests name that Ruby does not
# define are the program's: asked for on fd 4, answered on fd 3, called there. test/unit runs the tests here,
# not at exit; fd 5 hears that they all ran and passed.
module JudgeTests
  REPLIES = IO.new(3, 'rb')
  REQUESTS = IO.new(4, 'wb')
  SAID = IO.new(5, 'wb')
  ERRORS = [ArgumentError, TypeError, ZeroDivisionError, RuntimeError, IndexError, KeyError, RangeError,
            NameError, NoMethodError, FloatDomainError, StopIteration, FrozenError, NotImplementedError].freeze

  def self.ask(request)
    PlainData.send_message(REQUESTS, request)
    reply = PlainData.receive(REPLIES)
    raise 'the program ended before its tests did' unless reply.is_a?(Hash)
    reply
  end

  def self.call(name, args)
    reply = ask({'call' => name, 'args' => args})
    if reply.key?('error')
      error = reply['error'].is_a?(Hash) ? reply['error'] : {}
      raise ERRORS.find { |kind| kind.name == error['class'] } || RuntimeError, "in the program: #{error['message']}"
    end
    copy_back(args, reply['args'])
    reply['value']
  end

  # Arrays, hashes and strings the method changed in place, changed so here too.
  def self.copy_back(args, changed)
    return unless changed.is_a?(Array) && changed.size == args.size
    args.zip(changed).each do |arg, now|
      arg.replace(now) if [Array, Hash, String].any? { |kind| arg.instance_of?(kind) && now.instance_of?(kind) } && !arg.frozen?
    end
  end

  # Stubs, as methods of every object like the program's own top-level methods, for the names the tests use that
  # Ruby does not define and the program does.
  def self.define_program_methods(code)
    words = code.scan(/[A-Za-z_][A-Za-z0-9_]*[?!]?/).uniq
    wanted = words.reject { |name| Object.method_defined?(name) || Object.private_method_defined?(name) }
    defined = ask({'names' => wanted})['defined']
    (defined.is_a?(Hash) ? defined.keys & wanted : []).each do |name|
      Object.send(:define_method, name) { |*args| JudgeTests.call(name, args) }
      Object.send(:private, name)
    end
  end

  def self.run
    code = $stdin.read
    define_program_methods(code)
    TOPLEVEL_BINDING.eval(code, '/usr/lib/judge/tests.rb')
    if defined?(Test::Unit::AutoRunner)
      Test::Unit::AutoRunner.need_auto_run = false
      exit(1) unless Test::Unit::AutoRunner.run
    end
    SAID.write('done')
    SAID.flush
  end
end

JudgeTests.run
