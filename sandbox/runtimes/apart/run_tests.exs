# The tests' process of an Elixir program suite run apart from the program (sandbox/runner.py run_suite_apart; after
# plain_data.exs). It reads the tests' code on stdin and runs it; the modules it calls that Elixir does not have are
# the program's: stand-ins whose functions are asked for on fd 4, answered on fd 3, called there. fd 5 hears that the
# tests all ran and passed (ExUnit's suite, at exit).
defmodule JudgeTests do
  # The process that owns the pipes to the program (raw files belong to one process; ExUnit runs each test in its
  # own): it asks, one request at a time, for whichever process calls `ask`.
  def start_channel do
    parent = self()

    pid =
      spawn_link(fn ->
        {:ok, replies} = JudgePlainData.open(3, :read)
        {:ok, requests} = JudgePlainData.open(4, :append)
        send(parent, :judge_channel_open)
        channel(requests, replies)
      end)

    receive do
      :judge_channel_open -> Process.register(pid, :judge_channel)
    end
  end

  defp channel(requests, replies) do
    receive do
      {:ask, from, request} ->
        :ok = JudgePlainData.send_message(requests, request)
        send(from, {:judge_reply, JudgePlainData.receive_message(replies)})
        channel(requests, replies)
    end
  end

  def ask(request) do
    send(:judge_channel, {:ask, self(), request})

    receive do
      {:judge_reply, {:ok, reply}} -> reply
      {:judge_reply, :closed} -> raise "the program ended before its tests did"
    end
  end

  # The exception the program raised, as the tests know it (ArgumentError, ...; RuntimeError for one of its own).
  defp exception(kind) do
    module = if is_binary(kind), do: Module.concat([kind]), else: RuntimeError
    if Code.ensure_loaded?(module) and function_exported?(module, :exception, 1), do: module, else: RuntimeError
  end

  def said_done do
    {:ok, said} = JudgePlainData.open(5, :append)
    :ok = :file.write(said, "done")
    :file.close(said)
  end

  def call(module, function, args) do
    case ask({:call, module, function, args}) do
      {:value, value} -> value
      {:error, message, kind} -> raise exception(kind), "in the program: #{message}"
      {:error, message} -> raise "in the program: #{message}"
      _ -> raise "the program answered what is not a reply"
    end
  end

  # {module, function, arity} of each remote call and capture in the tests, of a module Elixir does not have.
  def program_calls(ast) do
    {_, calls} =
      Macro.prewalk(ast, [], fn
        {:&, _, [{:/, _, [{{:., _, [{:__aliases__, _, parts}, function]}, _, []}, arity]}]} = node, calls
        when is_atom(function) and is_integer(arity) ->
          {node, [{Module.concat(parts), function, arity} | calls]}

        {{:., _, [{:__aliases__, _, parts}, function]}, _, args} = node, calls when is_atom(function) and is_list(args) ->
          {node, [{Module.concat(parts), function, length(args)} | calls]}

        node, calls ->
          {node, calls}
      end)

    calls |> Enum.uniq() |> Enum.reject(fn {module, _, _} -> Code.ensure_loaded?(module) end)
  end

  def define_stand_ins(calls) do
    calls
    |> Enum.group_by(&elem(&1, 0), fn {_, function, arity} -> {function, arity} end)
    |> Enum.each(fn {module, functions} ->
      body =
        for {function, arity} <- functions do
          vars = Macro.generate_arguments(arity, __MODULE__)
          quote do
            def unquote(function)(unquote_splicing(vars)), do: JudgeTests.call(unquote(module), unquote(function), unquote(vars))
          end
        end

      Module.create(module, body, Macro.Env.location(__ENV__))
    end)
  end
end

JudgeTests.start_channel()
judge_ast = :stdio |> IO.read(:eof) |> Code.string_to_quoted!(file: "tests.exs")
judge_wanted = JudgeTests.program_calls(judge_ast)

case JudgeTests.ask({:names, judge_wanted}) do
  {:defined, defined} when is_list(defined) -> JudgeTests.define_stand_ins(Enum.filter(defined, &(&1 in judge_wanted)))
  _ -> raise "the program answered what is not a reply"
end

Code.eval_quoted(judge_ast, [], file: "tests.exs")

# Once the tests have all passed.
if Process.whereis(ExUnit.Server) do
  ExUnit.after_suite(fn result ->
    if result.failures == 0 and result.excluded == 0 and result.total > 0, do: JudgeTests.said_done()
  end)
else
  JudgeTests.said_done()
end
