(* OCaml values as plain data between a program suite's tests and the program, each in a binary of its own
   (sandbox/languages/ocaml_apart.py, which puts this text in each side's code and writes each declared type as a
   codec of these: `judge_list judge_float`). The bytes carry values only (never Marshal, which trusts its input):
   what the tests' side reads is checked whole (counts within the message, booleans 0 or 1, nothing left over). A
   reply that is not the declared type's value fails the test. Messages on a pipe: a 4-byte length, then the
   bytes. *)
exception Judge_malformed

type judge_reader = { judge_bytes : string; mutable judge_at : int }

type 'a judge_codec = { judge_put : Buffer.t -> 'a -> unit; judge_get : judge_reader -> 'a }

let judge_take reader n =
  if n < 0 || n > String.length reader.judge_bytes - reader.judge_at then raise Judge_malformed;
  let taken = String.sub reader.judge_bytes reader.judge_at n in
  reader.judge_at <- reader.judge_at + n;
  taken

let judge_int64 =
  { judge_put = (fun out x -> Buffer.add_int64_le out x);
    judge_get = (fun reader -> String.get_int64_le (judge_take reader 8) 0) }

let judge_count reader =
  let n = Int32.to_int (String.get_int32_le (judge_take reader 4) 0) in
  if n < 0 || n > String.length reader.judge_bytes - reader.judge_at then raise Judge_malformed;
  n

let judge_put_count out n = Buffer.add_int32_le out (Int32.of_int n)

let judge_int =
  { judge_put = (fun out x -> judge_int64.judge_put out (Int64.of_int x));
    judge_get = (fun reader -> Int64.to_int (judge_int64.judge_get reader)) }

let judge_float =
  { judge_put = (fun out x -> judge_int64.judge_put out (Int64.bits_of_float x));
    judge_get = (fun reader -> Int64.float_of_bits (judge_int64.judge_get reader)) }

let judge_bool =
  { judge_put = (fun out x -> Buffer.add_char out (if x then '\001' else '\000'));
    judge_get = (fun reader ->
      match judge_take reader 1 with "\000" -> false | "\001" -> true | _ -> raise Judge_malformed) }

let judge_char =
  { judge_put = (fun out x -> Buffer.add_char out x); judge_get = (fun reader -> (judge_take reader 1).[0]) }

let judge_unit = { judge_put = (fun _ () -> ()); judge_get = (fun _ -> ()) }

let judge_string =
  { judge_put = (fun out x -> judge_put_count out (String.length x); Buffer.add_string out x);
    judge_get = (fun reader -> judge_take reader (judge_count reader)) }

let judge_list item =
  { judge_put = (fun out xs -> judge_put_count out (List.length xs); List.iter (item.judge_put out) xs);
    judge_get = (fun reader -> List.init (judge_count reader) (fun _ -> item.judge_get reader)) }

let judge_array item =
  { judge_put = (fun out xs -> judge_put_count out (Array.length xs); Array.iter (item.judge_put out) xs);
    judge_get = (fun reader -> Array.init (judge_count reader) (fun _ -> item.judge_get reader)) }

let judge_option item =
  { judge_put = (fun out x ->
      match x with None -> judge_bool.judge_put out false | Some v -> judge_bool.judge_put out true; item.judge_put out v);
    judge_get = (fun reader -> if judge_bool.judge_get reader then Some (item.judge_get reader) else None) }

let judge_tuple2 a b =
  { judge_put = (fun out (x, y) -> a.judge_put out x; b.judge_put out y);
    judge_get = (fun reader -> let x = a.judge_get reader in let y = b.judge_get reader in (x, y)) }

let judge_tuple3 a b c =
  { judge_put = (fun out (x, y, z) -> a.judge_put out x; b.judge_put out y; c.judge_put out z);
    judge_get = (fun reader ->
      let x = a.judge_get reader in let y = b.judge_get reader in let z = c.judge_get reader in (x, y, z)) }

let judge_send channel message =
  let framed = Buffer.create (String.length message + 4) in
  judge_put_count framed (String.length message);
  Buffer.add_string framed message;
  output_string channel (Buffer.contents framed);
  flush channel

(* The next message, or None at the end of the pipe (the other side is gone). *)
let judge_receive channel =
  try
    let head = really_input_string channel 4 in
    Some (really_input_string channel (Int32.to_int (String.get_int32_le head 0)))
  with End_of_file -> None

(* --- the program's side: its server ---------------------------------------------------------------------------- *)

(* Answers each request on fd 3 on fd 4, by `answer`, until the tests are done; what the program raises goes to the
   tests, which raise it. *)
let judge_serve answer =
  let requests = open_in_bin "/dev/fd/3" and replies = open_out_bin "/dev/fd/4" in
  let rec loop () =
    match judge_receive requests with
    | None -> ()
    | Some request ->
        let reply = Buffer.create 64 in
        (try
           Buffer.add_char reply '\000';
           answer { judge_bytes = request; judge_at = 0 } reply
         with thrown ->
           Buffer.clear reply;
           Buffer.add_char reply '\001';
           judge_string.judge_put reply (Printexc.to_string thrown));
        flush stdout;
        judge_send replies (Buffer.contents reply);
        loop ()
  in
  loop ()

(* --- the tests' side ------------------------------------------------------------------------------------------- *)

let judge_channels = lazy (open_out_bin "/dev/fd/4", open_in_bin "/dev/fd/3")

let judge_refuse why =
  flush stdout;
  prerr_endline why;
  exit 1

(* The program's answer to a call of the entry point whose arguments `put` wrote: its result, of `returns`. *)
let judge_ask put returns =
  let requests, replies = Lazy.force judge_channels in
  let request = Buffer.create 64 in
  put request;
  judge_send requests (Buffer.contents request);
  match judge_receive replies with
  | None | Some "" -> judge_refuse "the program ended before its tests did"
  | Some reply ->
      let reader = { judge_bytes = reply; judge_at = 1 } in
      (try
         if reply.[0] = '\001' then failwith ("the program raised: " ^ judge_string.judge_get reader);
         if reply.[0] <> '\000' then raise Judge_malformed;
         let result = returns.judge_get reader in
         if reader.judge_at <> String.length reply then raise Judge_malformed;
         result
       with Judge_malformed -> judge_refuse "the program's reply is not a value of the declared type")

(* Says on fd 5 that the tests all ran (after them). *)
let judge_done () =
  let said = open_out_bin "/dev/fd/5" in
  output_string said "done";
  close_out said
