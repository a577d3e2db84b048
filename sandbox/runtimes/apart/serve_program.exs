# The program's process of an Elixir program suite run apart from its tests (sandbox/runner.py run_suite_apart;
# after plain_data.exs): the program's script runs, then answers the tests' requests on fd 3 with replies on fd 4
# until the tests' process is done, calling the functions its modules export. What they return or raise goes back as
# plain data.
defmodule JudgeProgram do
  def serve(requests, replies, modules) do
    case JudgePlainData.receive_message(requests) do
      {:ok, request} ->
        JudgePlainData.send_message(replies, answer(request, modules))
        serve(requests, replies, modules)

      :closed ->
        :ok
    end
  end

  defp exported?(modules, {module, function, arity}),
    do: module in modules and is_atom(function) and is_integer(arity) and function_exported?(module, function, arity)

  defp exported?(_modules, _call), do: false

  defp answer({:names, calls}, modules) when is_list(calls), do: {:defined, Enum.filter(calls, &exported?(modules, &1))}

  defp answer({:call, module, function, args}, modules) when is_list(args) do
    if exported?(modules, {module, function, length(args)}) do
      value = apply(module, function, args)
      if JudgePlainData.plain?(value), do: {:value, value}, else: {:error, "the program answered with what is not plain data"}
    else
      {:error, "the program has no function #{inspect(module)}.#{function}/#{length(args)}"}
    end
  rescue
    error -> {:error, Exception.message(error), inspect(error.__struct__)}
  catch
    kind, reason -> {:error, "#{kind}: #{inspect(reason)}"}
  end

  defp answer(_request, _modules), do: {:error, "a request that is not one"}
end

[judge_program | _] = System.argv()
System.argv([])
judge_modules = judge_program |> Code.require_file() |> List.wrap() |> Enum.map(&elem(&1, 0))
{:ok, judge_requests} = JudgePlainData.open(3, :read)
{:ok, judge_replies} = JudgePlainData.open(4, :append)
JudgeProgram.serve(judge_requests, judge_replies, judge_modules)
