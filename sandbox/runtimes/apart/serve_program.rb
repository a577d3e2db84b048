# The program's process of a Ruby program suite run apart from its tests (sandbox/runner.py run_suite_apart; after
# plain_data.rb): the program runs as the main script, then answers the tests' requests on fd 3 with replies on fd
# 4 until the tests' process is done. Its methods are called here; what they return or raise goes back as plain data.
module JudgeProgram
  REQUESTS = IO.new(3, 'rb')
  REPLIES = IO.new(4, 'wb')

  def self.described(error)
    {'class' => error.class.name.to_s, 'message' => error.message.to_s}
  rescue StandardError
    {'class' => 'RuntimeError', 'message' => 'the program raised what cannot be read'}
  end

  # {names}: which of them are the program's methods; {call, args}: one called.
  def self.answer(main, request)
    if request.key?('names')
      defined = request['names'].select { |name| name.is_a?(String) && main.respond_to?(name, true) }
      return {'defined' => defined.to_h { |name| [name, {'function' => true}] }}
    end
    args = request['args']
    value = main.send(request['call'], *args)
    {'value' => value, 'args' => args}
  rescue StandardError, ScriptError, SystemStackError, NoMemoryError => e
    {'error' => described(e)}
  end

  def self.serve(main, before)
    while (request = PlainData.receive(REQUESTS))
      request['names'] &&= request['names'] & (Object.private_instance_methods(false) - before).map(&:to_s)
      reply = answer(main, request)
      begin
        PlainData.send_message(REPLIES, reply)
      rescue PlainData::NotPlainData, JSON::GeneratorError, EncodingError => e
        message = "the program answered with what is not plain data: #{e.message}"
        PlainData.send_message(REPLIES, {'error' => {'class' => 'TypeError', 'message' => message}})
      end
    end
  end
end

judge_before = Object.private_instance_methods(false)
$0 = File.expand_path(ARGV.shift)
load $0
JudgeProgram.serve(self, judge_before)
