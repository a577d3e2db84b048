# Messages between a program suite's tests and the program, each in a process of its own (sandbox/runner.py
# run_suite_apart): its length (8 bytes, little-endian), then the term in Erlang's external format, decoded `:safe`
# (no new atoms, no external functions). Plain data only: numbers, atoms, binaries, and lists, tuples and maps of
# them; functions, pids, ports and references cannot be sent. Synchronous: a test's call waits for its reply.
defmodule JudgePlainData do
  @message_limit 1_073_741_824

  # Raw: read as written. A raw file belongs to the process that opened it.
  def open(fd, mode), do: :file.open(~c"/dev/fd/#{fd}", [mode, :raw, :binary])

  def plain?(value, depth \\ 0)
  def plain?(_value, depth) when depth > 1000, do: false
  def plain?(value, _depth) when is_number(value) or is_atom(value) or is_binary(value), do: true
  def plain?(value, depth) when is_list(value), do: plain_list?(value, depth + 1)
  def plain?(value, depth) when is_tuple(value), do: plain_list?(Tuple.to_list(value), depth + 1)
  def plain?(value, depth) when is_map(value), do: Enum.all?(value, fn {k, v} -> plain?(k, depth + 1) and plain?(v, depth + 1) end)
  def plain?(_value, _depth), do: false

  defp plain_list?([], _depth), do: true
  defp plain_list?([head | tail], depth), do: plain?(head, depth) and plain_list?(tail, depth)
  defp plain_list?(tail, depth), do: plain?(tail, depth)

  def send_message(io, value) do
    body = :erlang.term_to_binary(value)
    :ok = :file.write(io, [<<byte_size(body)::little-64>>, body])
  end

  # {:ok, the next message}, or :closed when the other side closed its end (or sent something cut, too big or unsafe).
  def receive_message(io) do
    with {:ok, <<size::little-64>>} <- read_exactly(io, 8, []),
         true <- size <= @message_limit,
         {:ok, body} <- read_exactly(io, size, []),
         {:ok, value} <- decode(body) do
      {:ok, value}
    else
      _ -> :closed
    end
  end

  defp read_exactly(_io, 0, chunks), do: {:ok, IO.iodata_to_binary(Enum.reverse(chunks))}

  defp read_exactly(io, size, chunks) do
    case :file.read(io, size) do
      {:ok, data} -> read_exactly(io, size - byte_size(data), [data | chunks])
      _ -> :closed
    end
  end

  defp decode(body) do
    value = :erlang.binary_to_term(body, [:safe])
    if plain?(value), do: {:ok, value}, else: :unsafe
  rescue
    _ -> :unsafe
  end
end
