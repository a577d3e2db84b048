"""Hostile programs in the 17 newer languages against the real sandbox service: their containment proof.

tests/test_sandbox_hostile.py proves the sandbox with the original seven languages; this module runs
the same kinds of attack in each of the others, through the same service fixture, Case rows and
`check` (imported from there, so the same leftover, host-disk, listener and secret checks follow
every case): a memory hog, a fork or thread bomb, a huge file, connections to the host's listeners,
reads of host files, and signals to everything in reach.

Beyond what that module checks, every case here leaves the host bait untouched: a listener on all
of the host's addresses (the program aims at its non-loopback one), a process of the host it tries
to kill by its pid, and files it tries to read from the home directory and /tmp of the host. A bomb
must also have met the process limit (the run's pids cgroup counts the forks it refused), and where
a verdict alone would not show that the attack ran, its detail must name what stopped it (the
test's memory cgroup: "over the memory limit", SIGXFSZ: "signal 25").

Where a language cannot express an attack it says why (Verilog: iverilog has no $system, no sockets
and no kill; `vvp -n main` loads no VPI module). Where a language has no system call for it, it does
what a program in it would do: start a shell (Lua, Elixir) or call libc through its foreign-function
interface (Haskell, OCaml, Fortran, C#, Racket).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from sandbox.judge import JudgeReport
from tests import test_sandbox_hostile as original
from tests.test_sandbox_hostile import (  # the original table's limits, rows and checks
    DISK,
    FAST,
    JUDGED,
    SMALL_MEMORY,
    THEN_BENIGN,
    Case,
    Hostile,
    case,
    check,
)
from tests.test_sandbox_hostile import test_service_kept_answering_throughout as service_kept_answering
from tests.verdicts import MLE, RE, TLE, A

LANGUAGES = (
    "bash", "php", "perl", "ruby", "lua", "r", "csharp", "d", "scala", "kotlin_script", "racket", "verilog",
    "haskell", "ocaml", "elixir", "clojure", "fortran",
)  # fmt: skip
VICTIM = f"86398.{uuid.uuid4().int % 10**9:09d}"  # `sleep VICTIM`: the host process the programs try to kill
BAIT = f"hostile-bait-{uuid.uuid4().hex[:8]}"  # host files the programs try to read

BOMB = replace(FAST, processes=32)
RUNTIME_BOMB = replace(FAST, processes=48)  # a JVM, Mono or BEAM starts a dozen threads of its own first
# These end by themselves (at the file-size limit; blocked or not) well within their time: time to spare for
# a JVM or BEAM starting on a busy 2-core machine costs nothing. FILL is the original's DISK (16 MiB of disk,
# 8 MiB files) with room for PHP and Ruby to start and make their blocks.
FILL = replace(DISK, memory_mb=512, time_s=4, wall_s=6)
PROBE = replace(FAST, time_s=4, wall_s=6)
# The BEAM near its run's memory bound: now and then the kernel reclaims its code pages for seconds before it
# OOM-kills (5.3 s once in 24 runs, either way a run starts, against 1.7 s): a wall limit past that.
BEAM_MEMORY = replace(SMALL_MEMORY, wall_s=10)

hostile = original.hostile  # its service fixture (module-scoped: a service of this module's own), by name

# Verilog cannot express these at all: no sockets, no kill, no $system (iverilog 11 has none).
NOT_APPLICABLE = {"network": {"verilog"}, "signals": {"verilog"}}

# fmt: off
MEMORY = [
    case("bash-double-string", "bash", {MLE}, "double a shell string without bound", """
        s=x
        while :; do s=$s$s; done
    """, limits=SMALL_MEMORY, detail="over the memory limit"),
    case("php-allocate", "php", {MLE}, "append 1 MiB strings without bound (memory_limit=-1)", """<?php
        $keep = [];
        while (true) { $keep[] = str_repeat("x", 1 << 20) . count($keep); }
    """, limits=SMALL_MEMORY, detail="over the memory limit"),
    case("perl-allocate", "perl", {MLE}, "push 1 MiB strings without bound", """
        my @keep;
        push @keep, "x" x (1 << 20) while 1;
    """, limits=SMALL_MEMORY, detail="over the memory limit"),
    case("ruby-allocate", "ruby", {MLE}, "append 1 MiB strings without bound", """
        keep = []
        loop { keep << "x" * (1 << 20) }
    """, limits=SMALL_MEMORY, detail="over the memory limit"),
    case("lua-allocate", "lua", {MLE}, "keep 1 MiB strings without bound", """
        local keep = {}
        while true do keep[#keep + 1] = string.rep("x", 1 << 20) .. #keep end
    """, limits=SMALL_MEMORY, detail="over the memory limit"),
    case("r-allocate", "r", {MLE, RE}, "keep 8 MiB random vectors without bound", """
        keep <- list()
        repeat keep[[length(keep) + 1]] <- runif(2^20)
    """, limits=SMALL_MEMORY),
    case("csharp-allocate", "csharp", {MLE, RE}, "keep 1 MiB arrays, every page touched, without bound (Mono)", """
        using System.Collections.Generic;
        class P {
            static void Main() {
                var keep = new List<byte[]>();
                for (;;) {
                    var block = new byte[1 << 20];
                    for (int i = 0; i < block.Length; i += 4096) block[i] = 1;
                    keep.Add(block);
                }
            }
        }
    """, limits=SMALL_MEMORY),
    case("d-allocate", "d", {MLE}, "append filled 1 MiB arrays without bound (D's GC)", """
        void main() {
            ubyte[][] keep;
            for (;;) {
                auto block = new ubyte[1 << 20];
                block[] = 1;
                keep ~= block;
            }
        }
    """, limits=SMALL_MEMORY, detail="over the memory limit"),
    case("scala-allocate", "scala", {MLE, RE}, "keep 1 MiB arrays without bound in the JVM", """
        object Main {
          def main(args: Array[String]): Unit = {
            val keep = scala.collection.mutable.ArrayBuffer[Array[Long]]()
            while (true) keep += new Array[Long](1 << 17)
          }
        }
    """, limits=SMALL_MEMORY, detail="java.lang.OutOfMemoryError"),
    case("kotlin-allocate", "kotlin_script", {MLE, RE}, "keep 1 MiB arrays without bound in the JVM", """
        val keep = mutableListOf<LongArray>()
        while (true) keep.add(LongArray(1 shl 17))
    """, limits=SMALL_MEMORY, detail="java.lang.OutOfMemoryError"),
    case("racket-allocate", "racket", {MLE, RE}, "cons up filled 1 MiB byte strings without bound", """
        #lang racket/base
        (let loop ([keep '()]) (loop (cons (make-bytes (expt 2 20) 1) keep)))
    """, limits=SMALL_MEMORY),
    # No dynamic allocation in Verilog-2005: one static memory of 2^26 64-bit words, written through.
    case("verilog-huge-memory", "verilog", {MLE}, "a 2^26-word memory, every word written", """
        module main;
          reg [63:0] mem [0:(1 << 26) - 1];
          integer i;
          initial begin
            for (i = 0; i < (1 << 26); i = i + 1) mem[i] = i;
            $display("done");
            $finish;
          end
        endmodule
    """, limits=SMALL_MEMORY, detail="over the memory limit"),
    case("haskell-retain-list", "haskell", {MLE, RE}, "retain a list of 10^9 Ints (two consumers share it)", """
        main :: IO ()
        main = let xs = [1 .. 10 ^ 9] :: [Int] in print (sum xs + length xs)
    """, limits=SMALL_MEMORY),
    case("ocaml-allocate", "ocaml", {MLE}, "cons up 1 MiB byte strings without bound", """
        let () =
          let keep = ref [] in
          while true do keep := Bytes.make (1 lsl 20) 'x' :: !keep done
    """, limits=SMALL_MEMORY, detail="over the memory limit"),
    case("elixir-allocate", "elixir", {MLE, RE}, "keep 1 MiB binaries without bound (off the BEAM's heaps)", """
        Stream.iterate(0, &(&1 + 1))
        |> Enum.reduce([], fn _, keep -> [:binary.copy(<<1>>, 1_048_576) | keep] end)
    """, limits=BEAM_MEMORY),
    case("clojure-allocate", "clojure", {MLE, RE}, "conj 1 MiB arrays without bound in the JVM", """
        (loop [keep []] (recur (conj keep (long-array 131072))))
    """, limits=SMALL_MEMORY),
    case("fortran-allocate", "fortran", {MLE}, "allocate and fill 1 MiB arrays, never freed", """
        program main
          implicit none
          integer(8), pointer :: block(:)
          do
            allocate(block(131072))
            block = 1
          end do
        end program main
    """, limits=SMALL_MEMORY, detail="over the memory limit"),
]

BOMBS = [
    case("bash-fork-bomb", "bash", {TLE, RE}, "the classic :(){ :|:& };: then background sleeps forever", """
        :(){ :|:& };:
        while :; do sleep 100 & done
    """, limits=BOMB),
    case("php-fork-bomb", "php", {TLE, RE}, "pcntl_fork in a loop in every child", """<?php
        while (true) { pcntl_fork(); }
    """, limits=BOMB),
    case("perl-fork-bomb", "perl", {TLE, RE}, "fork in a loop in every child", """
        fork while 1;
    """, limits=BOMB),
    case("ruby-fork-bomb", "ruby", {TLE, RE}, "fork in a loop in every child, failures ignored", """
        loop { fork rescue nil }
    """, limits=BOMB),
    # Lua has neither fork nor threads: every process it can start goes through a shell (io.popen).
    case("lua-popen-bomb", "lua", {TLE, RE}, "io.popen sleeping shells without bound", """
        local keep = {}
        while true do keep[#keep + 1] = io.popen("sleep 100") end
    """, limits=BOMB),
    case("r-fork-bomb", "r", {TLE, RE}, "parallel::mcparallel forks of R without bound", """
        repeat parallel::mcparallel(Sys.sleep(100))
    """, limits=BOMB),
    case("csharp-thread-bomb", "csharp", {TLE, RE, MLE}, "sleeping threads without bound (Mono)", """
        using System.Threading;
        class P {
            static void Main() {
                for (;;) new Thread(() => Thread.Sleep(Timeout.Infinite)).Start();
            }
        }
    """, limits=RUNTIME_BOMB),
    case("d-fork-bomb", "d", {TLE, RE}, "fork in a loop in every child", """
        import core.sys.posix.unistd : fork;
        void main() { for (;;) fork(); }
    """, limits=BOMB),
    case("scala-thread-bomb", "scala", {TLE, RE, MLE}, "sleeping threads without bound in the JVM", """
        object Main {
          def main(args: Array[String]): Unit =
            while (true) new Thread(new Runnable { def run(): Unit = Thread.sleep(100000) }).start()
        }
    """, limits=RUNTIME_BOMB),
    case("kotlin-thread-bomb", "kotlin_script", {TLE, RE, MLE}, "sleeping threads without bound in the JVM", """
        while (true) Thread { Thread.sleep(100000) }.start()
    """, limits=RUNTIME_BOMB),
    case("racket-subprocess-bomb", "racket", {TLE, RE}, "subprocesses without bound (Racket's threads are green)", """
        #lang racket/base
        (let loop ()
          (call-with-values
           (lambda ()
             (subprocess (current-output-port) (current-input-port) (current-error-port) "/usr/bin/sleep" "100"))
           void)
          (loop))
    """, limits=BOMB),
    # Verilog starts no process: its fork...join threads are the simulator's, inside one OS process. A
    # thread bomb of those (each thread forks two) is bounded by the run's memory instead.
    case("verilog-fork-join-bomb", "verilog", {MLE, RE, TLE}, "simulation threads that each fork two", """
        module main;
          task automatic spawn;
            begin
              fork
                spawn;
                spawn;
              join
            end
          endtask
          initial spawn;
        endmodule
    """, limits=SMALL_MEMORY),
    case("haskell-fork-bomb", "haskell", {TLE, RE}, "fork(2) through the FFI in a loop in every child", """
        import Control.Monad (forever)
        import Foreign.C.Types (CInt (..))

        foreign import ccall unsafe "fork" c_fork :: IO CInt

        main :: IO ()
        main = forever c_fork
    """, limits=BOMB),
    case("ocaml-fork-bomb", "ocaml", {TLE, RE}, "fork(2) as an external (no Unix library) in every child", """
        external fork : unit -> (int [@untagged]) = "fork_byte" "fork" [@@noalloc]
        let () = while true do ignore (fork ()) done
    """, limits=BOMB),
    case("elixir-port-bomb", "elixir", {TLE, RE}, "OS processes through ports without bound (BEAM's are not)", """
        Stream.repeatedly(fn -> Port.open({:spawn_executable, "/usr/bin/sleep"}, args: ["100"]) end)
        |> Stream.run()
    """, limits=replace(RUNTIME_BOMB, open_files=1024)),  # each port holds pipes: files must not run out first
    case("clojure-thread-bomb", "clojure", {TLE, RE, MLE}, "sleeping threads without bound in the JVM", """
        (loop [] (.start (Thread. #(Thread/sleep 100000))) (recur))
    """, limits=RUNTIME_BOMB),
    case("fortran-fork-bomb", "fortran", {TLE, RE}, "fork(2) through ISO_C_BINDING in a loop in every child", """
        program main
          use iso_c_binding, only: c_int
          implicit none
          interface
            integer(c_int) function c_fork() bind(c, name="fork")
              import :: c_int
            end function c_fork
          end interface
          integer(c_int) :: pid
          do
            pid = c_fork()
          end do
        end program main
    """, limits=BOMB),
]

DISK_FILL = [
    case("bash-fill-file", "bash", {RE}, "write 1 MiB blocks to /tmp/big without end", """
        block=$(printf '%1048576s' '')
        exec 3>/tmp/big
        while :; do printf '%s' "$block" >&3; done
    """, limits=FILL, detail="signal 25"),
    case("php-fill-file", "php", {RE}, "fwrite 1 MiB blocks to /tmp/big without end", """<?php
        $f = fopen("/tmp/big", "w");
        $block = str_repeat("x", 1 << 20);
        while (true) { fwrite($f, $block); }
    """, limits=FILL, detail="signal 25"),
    case("perl-fill-file", "perl", {RE}, "print 1 MiB blocks to /tmp/big without end", """
        open my $f, ">", "/tmp/big" or die "$!";
        my $block = "x" x (1 << 20);
        print $f $block while 1;
    """, limits=FILL, detail="signal 25"),
    case("ruby-fill-file", "ruby", {RE}, "write 1 MiB blocks to /tmp/big without end", """
        File.open("/tmp/big", "w") do |f|
          block = "x" * (1 << 20)
          loop { f.write(block) }
        end
    """, limits=FILL, detail="signal 25"),
    case("lua-fill-file", "lua", {RE}, "write 1 MiB blocks to /tmp/big without end", """
        local f = assert(io.open("/tmp/big", "w"))
        local block = string.rep("x", 1 << 20)
        while true do assert(f:write(block)) end
    """, limits=FILL, detail="signal 25"),
    case("r-fill-file", "r", {RE}, "writeBin 1 MiB blocks to /tmp/big without end", """
        con <- file("/tmp/big", "wb")
        block <- as.raw(rep(120, 2^20))
        repeat writeBin(block, con)
    """, limits=FILL, detail="signal 25"),
    case("csharp-fill-file", "csharp", {RE}, "write 1 MiB blocks to /tmp/big without end", """
        using System.IO;
        class P {
            static void Main() {
                using (var f = File.Create("/tmp/big")) {
                    var block = new byte[1 << 20];
                    for (;;) f.Write(block, 0, block.Length);
                }
            }
        }
    """, limits=FILL, detail="signal 25"),
    case("d-fill-file", "d", {RE}, "rawWrite 1 MiB blocks to /tmp/big without end", """
        import std.stdio : File;
        void main() {
            auto f = File("/tmp/big", "w");
            auto block = new ubyte[1 << 20];
            for (;;) f.rawWrite(block);
        }
    """, limits=FILL, detail="signal 25"),
    case("scala-fill-file", "scala", {RE}, "write 1 MiB blocks to /tmp/big without end", """
        object Main {
          def main(args: Array[String]): Unit = {
            val f = new java.io.FileOutputStream("/tmp/big")
            val block = new Array[Byte](1 << 20)
            while (true) f.write(block)
          }
        }
    """, limits=FILL),
    case("kotlin-fill-file", "kotlin_script", {RE}, "write 1 MiB blocks to /tmp/big without end", """
        val f = java.io.FileOutputStream("/tmp/big")
        val block = ByteArray(1 shl 20)
        while (true) f.write(block)
    """, limits=FILL),
    case("racket-fill-file", "racket", {RE}, "write 1 MiB blocks to /tmp/big without end", """
        #lang racket/base
        (define out (open-output-file "/tmp/big" #:exists 'truncate))
        (define block (make-bytes (expt 2 20) 120))
        (let loop () (write-bytes block out) (loop))
    """, limits=FILL, detail="signal 25"),
    case("verilog-fill-file", "verilog", {RE}, "$fwrite to /tmp/big without end ($fopen: Verilog's files)", """
        module main;
          integer f;
          initial begin
            f = $fopen("/tmp/big", "w");
            forever $fwrite(f, "%0128d%0128d%0128d%0128d%0128d%0128d%0128d%0128d", 0, 1, 2, 3, 4, 5, 6, 7);
          end
        endmodule
    """, limits=FILL, detail="signal 25"),
    case("haskell-fill-file", "haskell", {RE}, "writeFile an endless string to /tmp/big", """
        main :: IO ()
        main = writeFile "/tmp/big" (cycle "x")
    """, limits=FILL, detail="signal 25"),
    case("ocaml-fill-file", "ocaml", {RE}, "output 1 MiB blocks to /tmp/big without end", """
        let () =
          let oc = open_out_bin "/tmp/big" in
          let block = String.make (1 lsl 20) 'x' in
          while true do output_string oc block done
    """, limits=FILL, detail="signal 25"),
    case("elixir-fill-file", "elixir", {RE}, "write 1 MiB blocks to a raw /tmp/big without end", """
        {:ok, f} = :file.open("/tmp/big", [:write, :raw, :binary])
        block = :binary.copy("x", 1_048_576)
        Stream.repeatedly(fn -> :ok = :file.write(f, block) end) |> Stream.run()
    """, limits=FILL, detail="signal 25"),
    case("clojure-fill-file", "clojure", {RE}, "write 1 MiB blocks to /tmp/big without end", """
        (with-open [f (java.io.FileOutputStream. "/tmp/big")]
          (let [block (byte-array 1048576)]
            (loop [] (.write f block) (recur))))
    """, limits=FILL, detail="File too large"),
    case("fortran-fill-file", "fortran", {RE}, "write 1 MiB records to a stream file /tmp/big without end", """
        program main
          implicit none
          character(len=1048576) :: block
          integer :: u
          block = repeat("x", len(block))
          open(newunit=u, file="/tmp/big", access="stream", form="unformatted", status="replace")
          do
            write(u) block
          end do
        end program main
    """, limits=FILL),
]

# Each program tries the host's loopback listener (@PORT@) and its listener on every address, through
# the host's non-loopback address (@HOSTIP@): it prints "blocked" when neither connection opened.
NETWORK = [
    case("bash-dev-tcp", "bash", {A}, "bash's /dev/tcp to both host listeners", """
        hits=
        for to in 127.0.0.1/@PORT@ @HOSTIP@/@ANYPORT@; do
            if (exec 3<>"/dev/tcp/$to") 2>/dev/null; then hits="$hits $to"; fi
        done
        echo "${hits:-blocked}"
    """, limits=PROBE),
    case("php-socket-client", "php", {A}, "stream_socket_client to both host listeners", """<?php
        $hits = [];
        foreach (["127.0.0.1:@PORT@", "@HOSTIP@:@ANYPORT@"] as $to) {
            if (@stream_socket_client("tcp://$to", $errno, $errstr, 1)) { $hits[] = $to; }
        }
        echo $hits ? implode(" ", $hits) : "blocked", "\\n";
    """, limits=PROBE),
    case("perl-io-socket", "perl", {A}, "IO::Socket::INET to both host listeners", """
        use IO::Socket::INET;
        my @to = ("127.0.0.1:@PORT@", "@HOSTIP@:@ANYPORT@");
        my @hits = grep { IO::Socket::INET->new(PeerAddr => $_, Timeout => 1) } @to;
        print @hits ? "@hits\\n" : "blocked\\n";
    """, limits=PROBE),
    case("ruby-socket-tcp", "ruby", {A}, "Socket.tcp to both host listeners", """
        require "socket"
        hits = [["127.0.0.1", @PORT@], ["@HOSTIP@", @ANYPORT@]].filter_map do |host, port|
          Socket.tcp(host, port, connect_timeout: 1).close
          "#{host}:#{port}"
        rescue SystemCallError, SocketError
          nil
        end
        puts hits.empty? ? "blocked" : hits.join(" ")
    """, limits=PROBE),
    # Lua's standard library has no sockets (lua-socket is not installed): its way out is a shell's.
    case("lua-shell-dev-tcp", "lua", {A}, "bash /dev/tcp through os.execute to both host listeners", """
        local hits = {}
        for _, to in ipairs({"127.0.0.1/@PORT@", "@HOSTIP@/@ANYPORT@"}) do
            if os.execute("bash -c 'exec 3<>/dev/tcp/" .. to .. "' 2>/dev/null") then hits[#hits + 1] = to end
        end
        print(#hits > 0 and table.concat(hits, " ") or "blocked")
    """, limits=PROBE),
    case("r-socket-connection", "r", {A}, "socketConnection to both host listeners", """
        hits <- character()
        for (to in list(list("127.0.0.1", @PORT@), list("@HOSTIP@", @ANYPORT@))) {
          opened <- tryCatch({
            close(socketConnection(to[[1]], to[[2]], blocking = TRUE, timeout = 1))
            TRUE
          }, error = function(e) FALSE, warning = function(w) FALSE)
          if (opened) hits <- c(hits, paste(to, collapse = ":"))
        }
        writeLines(if (length(hits)) paste(hits, collapse = " ") else "blocked")
    """, limits=PROBE),
    case("csharp-tcp-client", "csharp", {A}, "TcpClient to both host listeners (Mono)", """
        using System;
        using System.Net.Sockets;
        class P {
            static void Main() {
                string hits = "";
                foreach (var to in new[] { "127.0.0.1:@PORT@", "@HOSTIP@:@ANYPORT@" }) {
                    var parts = to.Split(':');
                    try {
                        // Connect, not ConnectAsync: Mono prints "unknown policy 5" on stdout for a thread
                        // it starts once the runner has made the test SCHED_IDLE (a wrong answer, not a leak)
                        new TcpClient(parts[0], int.Parse(parts[1])).Close();
                        hits += to + " ";
                    } catch (Exception) { }
                }
                Console.WriteLine(hits == "" ? "blocked" : hits);
            }
        }
    """, limits=PROBE),
    case("d-tcp-socket", "d", {A}, "std.socket's TcpSocket to both host listeners", """
        import std.conv : to;
        import std.socket : InternetAddress, TcpSocket;
        import std.stdio : writeln;
        import std.string : join;
        void main() {
            string[] hits;
            foreach (target; [["127.0.0.1", "@PORT@"], ["@HOSTIP@", "@ANYPORT@"]]) {
                try {
                    new TcpSocket(new InternetAddress(target[0], target[1].to!ushort)).close();
                    hits ~= target.join(":");
                } catch (Exception) {}
            }
            writeln(hits.length ? hits.join(" ") : "blocked");
        }
    """, limits=PROBE),
    case("scala-socket", "scala", {A}, "java.net.Socket to both host listeners", """
        object Main {
          def main(args: Array[String]): Unit = {
            val hits = Seq(("127.0.0.1", @PORT@), ("@HOSTIP@", @ANYPORT@)).filter { case (host, port) =>
              try {
                val s = new java.net.Socket()
                s.connect(new java.net.InetSocketAddress(host, port), 1000)
                s.close()
                true
              } catch { case _: java.io.IOException => false }
            }
            println(if (hits.isEmpty) "blocked" else hits.mkString(" "))
          }
        }
    """, limits=PROBE),
    case("kotlin-socket", "kotlin_script", {A}, "java.net.Socket to both host listeners", """
        val hits = listOf("127.0.0.1" to @PORT@, "@HOSTIP@" to @ANYPORT@).filter { (host, port) ->
            try {
                java.net.Socket().use { it.connect(java.net.InetSocketAddress(host, port), 1000) }
                true
            } catch (e: java.io.IOException) {
                false
            }
        }
        println(if (hits.isEmpty()) "blocked" else hits.joinToString(" "))
    """, limits=PROBE),
    case("racket-tcp-connect", "racket", {A}, "tcp-connect to both host listeners", """
        #lang racket/base
        (require racket/string racket/tcp)
        (define hits
          (for/list ([to (list (cons "127.0.0.1" @PORT@) (cons "@HOSTIP@" @ANYPORT@))]
                     #:when (with-handlers ([exn:fail? (lambda (e) #f)])
                              (let-values ([(in out) (tcp-connect (car to) (cdr to))])
                                (close-output-port out)
                                #t)))
            (car to)))
        (displayln (if (null? hits) "blocked" (string-join hits " ")))
    """, limits=PROBE),
    case("haskell-ffi-connect", "haskell", {A}, "socket(2) and connect(2) through the FFI to both host listeners", """
        import Data.Word (Word8)
        import Foreign.C.Types (CInt (..))
        import Foreign.Marshal.Array (withArrayLen)
        import Foreign.Ptr (Ptr)

        foreign import ccall unsafe "socket" c_socket :: CInt -> CInt -> CInt -> IO CInt
        foreign import ccall unsafe "connect" c_connect :: CInt -> Ptr Word8 -> CInt -> IO CInt

        -- struct sockaddr_in: AF_INET (little-endian), the port (big-endian), the address, 8 zero bytes
        sockaddr :: [Word8] -> Int -> [Word8]
        sockaddr address port =
          [2, 0, fromIntegral (port `div` 256), fromIntegral (port `mod` 256)] ++ address ++ replicate 8 0

        reaches :: ([Word8], Int) -> IO Bool
        reaches (address, port) = do
          fd <- c_socket 2 1 0
          withArrayLen (sockaddr address port) $ \\len ptr -> (== 0) <$> c_connect fd ptr (fromIntegral len)

        main :: IO ()
        main = do
          hits <- mapM reaches [([127, 0, 0, 1], @PORT@), ([@HOSTIP_BYTES@], @ANYPORT@)]
          putStrLn (if or hits then "connected " ++ show hits else "blocked")
    """, limits=PROBE),
    case("ocaml-external-connect", "ocaml", {A}, "socket(2) and connect(2) as externals to both host listeners", """
        external socket : (int [@untagged]) -> (int [@untagged]) -> (int [@untagged]) -> (int [@untagged])
          = "socket_byte" "socket" [@@noalloc]
        external connect : (int [@untagged]) -> Bytes.t -> (int [@untagged]) -> (int [@untagged])
          = "connect_byte" "connect" [@@noalloc]

        (* struct sockaddr_in: AF_INET (little-endian), the port (big-endian), the address, 8 zero bytes *)
        let sockaddr address port =
          let b = Bytes.make 16 '\\000' in
          Bytes.set b 0 '\\002';
          Bytes.set b 2 (Char.chr (port / 256));
          Bytes.set b 3 (Char.chr (port mod 256));
          String.split_on_char '.' address
          |> List.iteri (fun i part -> Bytes.set b (4 + i) (Char.chr (int_of_string part)));
          b

        let () =
          let hits =
            List.filter
              (fun (address, port) -> connect (socket 2 1 0) (sockaddr address port) 16 = 0)
              [ ("127.0.0.1", @PORT@); ("@HOSTIP@", @ANYPORT@) ]
          in
          print_endline (if hits = [] then "blocked" else String.concat " " (List.map fst hits))
    """, limits=PROBE),
    case("elixir-gen-tcp", "elixir", {A}, ":gen_tcp.connect to both host listeners", """
        hits =
          for {host, port} <- [{"127.0.0.1", @PORT@}, {"@HOSTIP@", @ANYPORT@}],
              match?({:ok, _}, :gen_tcp.connect(String.to_charlist(host), port, [], 1000)),
              do: "#{host}:#{port}"

        IO.puts(if hits == [], do: "blocked", else: Enum.join(hits, " "))
    """, limits=PROBE),
    case("clojure-socket", "clojure", {A}, "java.net.Socket to both host listeners", """
        (def hits
          (for [[host port] [["127.0.0.1" @PORT@] ["@HOSTIP@" @ANYPORT@]]
                :when (try (doto (java.net.Socket.) (.connect (java.net.InetSocketAddress. host port) 1000) (.close))
                           true
                           (catch java.io.IOException _ false))]
            (str host ":" port)))
        (println (if (empty? hits) "blocked" (clojure.string/join " " hits)))
    """, limits=PROBE),
    case("fortran-c-connect", "fortran", {A}, "socket(2), connect(2) through ISO_C_BINDING to both host listeners", """
        program main
          use iso_c_binding, only: c_char, c_int
          implicit none
          interface
            integer(c_int) function c_socket(domain, stype, protocol) bind(c, name="socket")
              import :: c_int
              integer(c_int), value :: domain, stype, protocol
            end function c_socket
            integer(c_int) function c_connect(fd, address, length) bind(c, name="connect")
              import :: c_char, c_int
              integer(c_int), value :: fd, length
              character(kind=c_char), dimension(16) :: address
            end function c_connect
          end interface
          logical :: hits(2)
          hits(1) = reaches([127, 0, 0, 1], @PORT@)
          hits(2) = reaches([@HOSTIP_BYTES@], @ANYPORT@)
          if (any(hits)) then
            print '(a, 2l2)', "connected", hits
          else
            print '(a)', "blocked"
          end if
        contains
          ! struct sockaddr_in: AF_INET (little-endian), the port (big-endian), the address, 8 zero bytes
          logical function reaches(address, port)
            integer, intent(in) :: address(4), port
            character(kind=c_char) :: sockaddr(16)
            integer :: i
            sockaddr = achar(0)
            sockaddr(1) = achar(2)
            sockaddr(3) = achar(port / 256)
            sockaddr(4) = achar(mod(port, 256))
            do i = 1, 4
              sockaddr(4 + i) = achar(address(i))
            end do
            reaches = c_connect(c_socket(2_c_int, 1_c_int, 0_c_int), sockaddr, 16_c_int) == 0
          end function reaches
        end program main
    """, limits=PROBE),
]

# Each program looks for /etc/shadow, the bait files in the host's home and /tmp, and the service's
# pyproject.toml by its host path: it prints "blocked" when none exists or opens.
HOST_FILES = [
    case("bash-read-host-files", "bash", {A}, "test and cat host files", """
        seen=
        for f in /etc/shadow @HOMEFILE@ @TMPFILE@ @REPO@/pyproject.toml; do
            if [ -e "$f" ] || cat "$f" 2>/dev/null; then seen="$seen $f"; fi
        done
        echo "${seen:-blocked}"
    """, limits=PROBE),
    case("php-read-host-files", "php", {A}, "file_exists and file_get_contents of host files", """<?php
        $seen = [];
        foreach (["/etc/shadow", "@HOMEFILE@", "@TMPFILE@", "@REPO@/pyproject.toml"] as $f) {
            if (file_exists($f) || @file_get_contents($f) !== false) { $seen[] = $f; }
        }
        echo $seen ? implode(" ", $seen) : "blocked", "\\n";
    """, limits=PROBE),
    case("perl-read-host-files", "perl", {A}, "-e and open of host files", """
        my @paths = ("/etc/shadow", "@HOMEFILE@", "@TMPFILE@", "@REPO@/pyproject.toml");
        my @seen = grep { -e $_ || open(my $f, "<", $_) } @paths;
        print @seen ? "@seen\\n" : "blocked\\n";
    """, limits=PROBE),
    case("ruby-read-host-files", "ruby", {A}, "File.exist? and File.read of host files", """
        seen = ["/etc/shadow", "@HOMEFILE@", "@TMPFILE@", "@REPO@/pyproject.toml"].select do |path|
          File.exist?(path) || File.read(path)
        rescue SystemCallError
          false
        end
        puts seen.empty? ? "blocked" : seen.join(" ")
    """, limits=PROBE),
    case("lua-read-host-files", "lua", {A}, "io.open host files", """
        local seen = {}
        for _, path in ipairs({"/etc/shadow", "@HOMEFILE@", "@TMPFILE@", "@REPO@/pyproject.toml"}) do
            if io.open(path) then seen[#seen + 1] = path end
        end
        print(#seen > 0 and table.concat(seen, " ") or "blocked")
    """, limits=PROBE),
    case("r-read-host-files", "r", {A}, "file.exists and file.access of host files", """
        paths <- c("/etc/shadow", "@HOMEFILE@", "@TMPFILE@", "@REPO@/pyproject.toml")
        seen <- paths[file.exists(paths) | file.access(paths, 4) == 0]
        writeLines(if (length(seen)) paste(seen, collapse = " ") else "blocked")
    """, limits=PROBE),
    case("csharp-read-host-files", "csharp", {A}, "File.Exists and File.ReadAllText of host files", """
        using System;
        using System.IO;
        class P {
            static void Main() {
                string seen = "";
                foreach (var path in new[] { "/etc/shadow", "@HOMEFILE@", "@TMPFILE@", "@REPO@/pyproject.toml" }) {
                    try {
                        if (File.Exists(path) || File.ReadAllText(path) != null) seen += path + " ";
                    } catch (Exception) { }
                }
                Console.WriteLine(seen == "" ? "blocked" : seen);
            }
        }
    """, limits=PROBE),
    case("d-read-host-files", "d", {A}, "exists and readText of host files", """
        import std.file : exists, readText;
        import std.stdio : writeln;
        import std.string : join;
        void main() {
            string[] seen;
            foreach (path; ["/etc/shadow", "@HOMEFILE@", "@TMPFILE@", "@REPO@/pyproject.toml"]) {
                try {
                    if (path.exists || path.readText !is null) seen ~= path;
                } catch (Exception) {}
            }
            writeln(seen.length ? seen.join(" ") : "blocked");
        }
    """, limits=PROBE),
    case("scala-read-host-files", "scala", {A}, "File.exists and Files.readAllBytes of host files", """
        object Main {
          def main(args: Array[String]): Unit = {
            val seen = Seq("/etc/shadow", "@HOMEFILE@", "@TMPFILE@", "@REPO@/pyproject.toml").filter { path =>
              new java.io.File(path).exists ||
                (try { java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(path)); true }
                 catch { case _: java.io.IOException => false })
            }
            println(if (seen.isEmpty) "blocked" else seen.mkString(" "))
          }
        }
    """, limits=PROBE),
    case("kotlin-read-host-files", "kotlin_script", {A}, "File.exists and readText of host files", """
        val seen = listOf("/etc/shadow", "@HOMEFILE@", "@TMPFILE@", "@REPO@/pyproject.toml").filter {
            java.io.File(it).exists() || runCatching { java.io.File(it).readText() }.isSuccess
        }
        println(if (seen.isEmpty()) "blocked" else seen.joinToString(" "))
    """, limits=PROBE),
    case("racket-read-host-files", "racket", {A}, "file-exists? and file->string of host files", """
        #lang racket/base
        (require racket/file racket/string)
        (define seen
          (for/list ([path '("/etc/shadow" "@HOMEFILE@" "@TMPFILE@" "@REPO@/pyproject.toml")]
                     #:when (or (file-exists? path)
                                (with-handlers ([exn:fail? (lambda (e) #f)]) (file->string path) #t)))
            path))
        (displayln (if (null? seen) "blocked" (string-join seen " ")))
    """, limits=PROBE),
    case("verilog-fopen-host-files", "verilog", {A}, "$fopen host files (0: not opened)", """
        module main;
          integer shadow, home, tmp, repo;
          initial begin
            shadow = $fopen("/etc/shadow", "r");
            home = $fopen("@HOMEFILE@", "r");
            tmp = $fopen("@TMPFILE@", "r");
            repo = $fopen("@REPO@/pyproject.toml", "r");
            if (shadow == 0 && home == 0 && tmp == 0 && repo == 0) $display("blocked");
            else $display("opened %0d %0d %0d %0d", shadow, home, tmp, repo);
            $finish;
          end
        endmodule
    """, limits=PROBE),
    case("haskell-read-host-files", "haskell", {A}, "doesPathExist and readFile of host files", """
        import Control.Exception (SomeException, evaluate, try)
        import Control.Monad (filterM)
        import System.Directory (doesPathExist)

        readable :: FilePath -> IO Bool
        readable path = do
          exists <- doesPathExist path
          contents <- try (readFile path >>= evaluate . length) :: IO (Either SomeException Int)
          return (exists || either (const False) (const True) contents)

        main :: IO ()
        main = do
          seen <- filterM readable ["/etc/shadow", "@HOMEFILE@", "@TMPFILE@", "@REPO@/pyproject.toml"]
          putStrLn (if null seen then "blocked" else unwords seen)
    """, limits=PROBE),
    case("ocaml-read-host-files", "ocaml", {A}, "Sys.file_exists and open_in of host files", """
        let readable path =
          Sys.file_exists path || (try close_in (open_in path); true with Sys_error _ -> false)

        let () =
          let seen = List.filter readable [ "/etc/shadow"; "@HOMEFILE@"; "@TMPFILE@"; "@REPO@/pyproject.toml" ] in
          print_endline (if seen = [] then "blocked" else String.concat " " seen)
    """, limits=PROBE),
    case("elixir-read-host-files", "elixir", {A}, "File.exists? and File.read of host files", """
        seen =
          Enum.filter(["/etc/shadow", "@HOMEFILE@", "@TMPFILE@", "@REPO@/pyproject.toml"], fn path ->
            File.exists?(path) or match?({:ok, _}, File.read(path))
          end)

        IO.puts(if seen == [], do: "blocked", else: Enum.join(seen, " "))
    """, limits=PROBE),
    case("clojure-read-host-files", "clojure", {A}, ".exists and slurp of host files", """
        (def seen
          (filter #(or (.exists (java.io.File. %)) (try (slurp %) true (catch Exception _ false)))
                  ["/etc/shadow" "@HOMEFILE@" "@TMPFILE@" "@REPO@/pyproject.toml"]))
        (println (if (empty? seen) "blocked" (clojure.string/join " " seen)))
    """, limits=PROBE),
    case("fortran-read-host-files", "fortran", {A}, "inquire and open of host files", """
        program main
          implicit none
          character(len=200) :: paths(4)
          logical :: seen(4)
          integer :: i, u, status
          paths = [character(len=200) :: "/etc/shadow", &
                   "@HOMEFILE@", &
                   "@TMPFILE@", &
                   "@REPO@/pyproject.toml"]
          do i = 1, 4
            inquire(file=trim(paths(i)), exist=seen(i))
            open(newunit=u, file=trim(paths(i)), status="old", action="read", iostat=status)
            if (status == 0) seen(i) = .true.
          end do
          if (any(seen)) then
            print '(a, 4l2)', "seen", seen
          else
            print '(a)', "blocked"
          end if
        end program main
    """, limits=PROBE),
]

# THEN_BENIGN: test 1 signals the service (@HOSTPID@), the host's victim (@VICTIM@), its parent and
# PID 1 (SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGSTOP), then kill(-1, SIGKILL), and prints "alive"; tests
# 2 and 3 add two numbers. Test 1 must survive (PID 1 of the sandbox's namespace ignores them all;
# kill(-1) spares its caller) unless its kill goes through a shell, whose kill -1 takes its caller too;
# tests 2 and 3 may meet test 1's kill(-1) (they run beside it) but must be judged.
SHELL_KILL = ({A, RE}, JUDGED, JUDGED)
SURVIVES = ({A}, JUDGED, JUDGED)
SIGNALS = [
    case("bash-kill-everything", "bash", SURVIVES, "kill host pids, $PPID and PID 1, then kill -9 -1", """
        read -r a b
        if [ -n "$a" ]; then echo $((a + b)); exit; fi
        for pid in @HOSTPID@ @VICTIM@ $PPID 1; do
            for sig in KILL TERM INT HUP STOP; do kill -s $sig $pid 2>/dev/null; done
        done
        kill -9 -1 2>/dev/null
        echo alive
    """, suite=THEN_BENIGN, limits=PROBE),
    case("php-posix-kill", "php", SURVIVES, "posix_kill host pids, the parent and PID 1, then -1", """<?php
        $in = preg_split('/\\s+/', trim(stream_get_contents(STDIN)), -1, PREG_SPLIT_NO_EMPTY);
        if ($in) { echo array_sum($in), "\\n"; exit; }
        foreach ([@HOSTPID@, @VICTIM@, posix_getppid(), 1] as $pid) {
            foreach ([SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGSTOP] as $sig) { @posix_kill($pid, $sig); }
        }
        @posix_kill(-1, SIGKILL);
        echo "alive\\n";
    """, suite=THEN_BENIGN, limits=PROBE),
    case("perl-kill", "perl", SURVIVES, "kill host pids, the parent and PID 1, then -1", """
        my @in = split " ", join("", <STDIN>);
        if (@in) { print $in[0] + $in[1], "\\n"; exit; }
        for my $pid (@HOSTPID@, @VICTIM@, getppid(), 1) { kill $_, $pid for qw(KILL TERM INT HUP STOP); }
        kill "KILL", -1;
        print "alive\\n";
    """, suite=THEN_BENIGN, limits=PROBE),
    case("ruby-process-kill", "ruby", SURVIVES, "Process.kill host pids, the parent and PID 1, then -1", """
        words = $stdin.read.split
        if words.any?
          puts words.sum(&:to_i)
          exit
        end
        [@HOSTPID@, @VICTIM@, Process.ppid, 1].product(%w[KILL TERM INT HUP STOP]).each do |pid, sig|
          Process.kill(sig, pid)
        rescue SystemCallError
          nil
        end
        begin
          Process.kill("KILL", -1)
        rescue SystemCallError
          nil
        end
        puts "alive"
    """, suite=THEN_BENIGN, limits=PROBE),
    # Lua has no kill: a shell's, whose kill -9 -1 also takes this interpreter (a runtime error, contained).
    case("lua-shell-kill", "lua", SHELL_KILL, "a shell kills host pids and PID 1, then kill -9 -1", """
        local a, b = io.read("n", "n")
        if a then print(math.tointeger(a + b)) return end
        for _, pid in ipairs({@HOSTPID@, @VICTIM@, 1}) do
            os.execute("for s in KILL TERM INT HUP STOP; do kill -s $s " .. pid .. " 2>/dev/null; done")
        end
        os.execute("kill -9 -1")
        print("alive")
    """, suite=THEN_BENIGN, limits=PROBE),
    case("r-pskill", "r", SURVIVES, "tools::pskill host pids, the parent and PID 1, then mckill -1", """
        v <- scan(file("stdin"), quiet = TRUE)
        if (length(v)) {
          cat(sum(v), "\\n", sep = "")
        } else {
          ppid <- as.integer(strsplit(readLines("/proc/self/stat"), " ")[[1]][4])
          for (pid in c(@HOSTPID@, @VICTIM@, ppid, 1)) {
            for (sig in c(tools::SIGKILL, tools::SIGTERM, tools::SIGINT, tools::SIGHUP, tools::SIGSTOP)) {
              tools::pskill(pid, sig)
            }
          }
          # pskill skips pids below 1: parallel's mckill sends kill(2) whatever the pid of a "process" (it fails,
          # ESRCH, where no other process of the sandbox is left to signal: a test alone there)
          try(parallel:::mckill(structure(list(pid = -1L), class = "process"), tools::SIGKILL), silent = TRUE)
          cat("alive\\n")
        }
    """, suite=THEN_BENIGN, limits=PROBE),
    case("csharp-libc-kill", "csharp", SURVIVES, "libc kill (P/Invoke) host pids, the parent and PID 1, then -1", """
        using System;
        using System.Runtime.InteropServices;
        class P {
            [DllImport("libc")] static extern int kill(int pid, int sig);
            [DllImport("libc")] static extern int getppid();
            static void Main() {
                var words = Console.In.ReadToEnd().Split((char[])null, StringSplitOptions.RemoveEmptyEntries);
                if (words.Length > 0) { Console.WriteLine(int.Parse(words[0]) + int.Parse(words[1])); return; }
                foreach (int pid in new[] { @HOSTPID@, @VICTIM@, getppid(), 1 })
                    foreach (int sig in new[] { 9, 15, 2, 1, 19 }) kill(pid, sig);
                kill(-1, 9);
                Console.WriteLine("alive");
            }
        }
    """, suite=THEN_BENIGN, limits=PROBE),
    case("d-kill", "d", SURVIVES, "kill host pids, the parent and PID 1, then -1", """
        import core.sys.posix.signal : kill, SIGHUP, SIGINT, SIGKILL, SIGSTOP, SIGTERM;
        import core.sys.posix.unistd : getppid;
        import std.algorithm : map, sum;
        import std.array : join, split;
        import std.conv : to;
        import std.stdio : stdin, writeln;
        void main() {
            auto words = stdin.byLineCopy.join(" ").split;
            if (words.length) { writeln(words.map!(to!long).sum); return; }
            foreach (pid; [@HOSTPID@, @VICTIM@, getppid(), 1])
                foreach (sig; [SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGSTOP]) kill(pid, sig);
            kill(-1, SIGKILL);
            writeln("alive");
        }
    """, suite=THEN_BENIGN, limits=PROBE),
    case("scala-destroy-processes", "scala", SURVIVES, "destroy host pids, the parent, PID 1 and every process", """
        object Main {
          // scalac 2.11 writes Java 6 classes, which cannot call an interface's static methods: reflection does
          val handles = classOf[ProcessHandle]
          def call(name: String, args: AnyRef*): AnyRef =
            handles.getMethods.find(_.getName == name).get.invoke(null, args: _*)
          def of(pid: Long) = call("of", Long.box(pid)).asInstanceOf[java.util.Optional[ProcessHandle]]

          def main(args: Array[String]): Unit = {
            val words = scala.io.Source.stdin.mkString.split("\\\\s+").filter(_.nonEmpty)
            if (words.nonEmpty) { println(words.map(_.toLong).sum); return }
            val me = call("current").asInstanceOf[ProcessHandle]
            for (target <- Seq(of(@HOSTPID@), of(@VICTIM@), me.parent, of(1)) if target.isPresent) {
              target.get.destroy()
              target.get.destroyForcibly()
            }
            val each = call("allProcesses").asInstanceOf[java.util.stream.Stream[ProcessHandle]].iterator
            while (each.hasNext) { val p = each.next; if (p.pid != me.pid) p.destroyForcibly() }
            println("alive")
          }
        }
    """, suite=THEN_BENIGN, limits=PROBE),
    case("kotlin-destroy-processes", "kotlin_script", SURVIVES, "destroy host pids, parent, PID 1, every process", """
        val words = generateSequence(::readLine).joinToString(" ").split(Regex("\\\\s+")).filter { it.isNotEmpty() }
        if (words.isNotEmpty()) {
            println(words.map { it.toLong() }.sum())
        } else {
            // Scripts compile to Java 6 classes here, which cannot call an interface's static methods: reflection does
            fun call(name: String, vararg args: Any) =
                ProcessHandle::class.java.methods.first { it.name == name }.invoke(null, *args)
            fun of(pid: Long) = call("of", pid) as java.util.Optional<*>
            val me = call("current") as ProcessHandle
            listOf(of(@HOSTPID@), of(@VICTIM@), me.parent(), of(1)).filter { it.isPresent }
                .map { it.get() as ProcessHandle }
                .forEach { it.destroy(); it.destroyForcibly() }
            val all = call("allProcesses") as java.util.stream.Stream<*>
            all.iterator().forEach { if ((it as ProcessHandle).pid() != me.pid()) it.destroyForcibly() }
            println("alive")
        }
    """, suite=THEN_BENIGN, limits=PROBE),
    case("racket-ffi-kill", "racket", SURVIVES, "libc kill (ffi/unsafe) host pids, the parent and PID 1, then -1", """
        #lang racket/base
        (require ffi/unsafe racket/port racket/string)
        (define kill (get-ffi-obj "kill" #f (_fun _int _int -> _int)))
        (define getppid (get-ffi-obj "getppid" #f (_fun -> _int)))
        (define words (string-split (port->string (current-input-port))))
        (cond
          [(pair? words) (displayln (apply + (map string->number words)))]
          [else
           (for* ([pid (list @HOSTPID@ @VICTIM@ (getppid) 1)] [sig '(9 15 2 1 19)]) (kill pid sig))
           (kill -1 9)
           (displayln "alive")])
    """, suite=THEN_BENIGN, limits=PROBE),
    case("haskell-ffi-kill", "haskell", SURVIVES, "kill(2) through the FFI: host pids, the parent, PID 1, -1", """
        import Foreign.C.Types (CInt (..))

        foreign import ccall unsafe "kill" c_kill :: CInt -> CInt -> IO CInt
        foreign import ccall unsafe "getppid" c_getppid :: IO CInt

        main :: IO ()
        main = do
          input <- words <$> getContents
          if not (null input)
            then print (sum (map read input) :: Integer)
            else do
              ppid <- c_getppid
              mapM_ (uncurry c_kill) [(pid, sig) | pid <- [@HOSTPID@, @VICTIM@, ppid, 1], sig <- [9, 15, 2, 1, 19]]
              _ <- c_kill (-1) 9
              putStrLn "alive"
    """, suite=THEN_BENIGN, limits=PROBE),
    case("ocaml-external-kill", "ocaml", SURVIVES, "kill(2) as an external: host pids, the parent, PID 1, -1", """
        external kill : (int [@untagged]) -> (int [@untagged]) -> (int [@untagged]) = "kill_byte" "kill" [@@noalloc]
        external getppid : unit -> (int [@untagged]) = "getppid_byte" "getppid" [@@noalloc]

        let () =
          try Scanf.scanf " %d %d" (fun a b -> Printf.printf "%d\\n" (a + b))
          with Scanf.Scan_failure _ | End_of_file ->
            List.iter
              (fun pid -> List.iter (fun signal -> ignore (kill pid signal)) [ 9; 15; 2; 1; 19 ])
              [ @HOSTPID@; @VICTIM@; getppid (); 1 ];
            ignore (kill (-1) 9);
            print_endline "alive"
    """, suite=THEN_BENIGN, limits=PROBE),
    # The BEAM has no kill of OS processes: /usr/bin/kill's, whose kill -9 -1 also takes the BEAM.
    case("elixir-system-kill", "elixir", SHELL_KILL, "kill host pids, the parent and PID 1, then -1", """
        input = case IO.read(:stdio, :eof) do
          :eof -> ""
          data -> data
        end

        case String.split(input) do
          [a, b] ->
            IO.puts(String.to_integer(a) + String.to_integer(b))

          _ ->
            ppid = File.read!("/proc/self/stat") |> String.split(" ") |> Enum.at(3)

            for signal <- ~w(KILL TERM INT HUP STOP) do
              System.cmd("kill", ["-#{signal}", "@HOSTPID@", "@VICTIM@", ppid, "1"], stderr_to_stdout: true)
            end

            System.cmd("kill", ["-KILL", "-1"], stderr_to_stdout: true)
            IO.puts("alive")
        end
    """, suite=THEN_BENIGN, limits=PROBE),
    case("clojure-destroy-processes", "clojure", SURVIVES, "destroy host pids, the parent, PID 1, every process", """
        (let [words (remove empty? (clojure.string/split (slurp *in*) #"\\s+"))]
          (if (seq words)
            (println (reduce + (map #(Long/parseLong %) words)))
            (let [me (java.lang.ProcessHandle/current)]
              (doseq [h [(java.lang.ProcessHandle/of @HOSTPID@) (java.lang.ProcessHandle/of @VICTIM@) (.parent me)
                         (java.lang.ProcessHandle/of 1)]
                      :when (.isPresent h)]
                (.destroy (.get h))
                (.destroyForcibly (.get h)))
              (doseq [p (iterator-seq (.iterator (java.lang.ProcessHandle/allProcesses)))
                      :when (not= (.pid p) (.pid me))]
                (.destroyForcibly p))
              (println "alive"))))
    """, suite=THEN_BENIGN, limits=PROBE),
    case("fortran-c-kill", "fortran", SURVIVES, "kill(2) through ISO_C_BINDING: host pids, the parent, PID 1, -1", """
        program main
          use iso_c_binding, only: c_int
          implicit none
          interface
            integer(c_int) function c_kill(pid, sig) bind(c, name="kill")
              import :: c_int
              integer(c_int), value :: pid, sig
            end function c_kill
            integer(c_int) function c_getppid() bind(c, name="getppid")
              import :: c_int
            end function c_getppid
          end interface
          integer(c_int) :: pids(4), signals(5), status
          integer :: a, b, i, j, iostat
          read(*, *, iostat=iostat) a, b
          if (iostat == 0) then
            print '(i0)', a + b
            stop
          end if
          pids = [integer(c_int) :: @HOSTPID@, @VICTIM@, c_getppid(), 1]
          signals = [9, 15, 2, 1, 19]
          do i = 1, 4
            do j = 1, 5
              status = c_kill(pids(i), signals(j))
            end do
          end do
          status = c_kill(-1_c_int, 9_c_int)
          print '(a)', "alive"
        end program main
    """, suite=THEN_BENIGN, limits=PROBE),
]
# fmt: on

TABLES = {
    "memory": MEMORY, "bombs": BOMBS, "disk": DISK_FILL, "network": NETWORK, "files": HOST_FILES, "signals": SIGNALS,
}  # fmt: skip


# --- the host's bait: what the programs aim at, checked after every case ---------------------


def host_address() -> str:
    """An address of this host that is not 127.0.0.1: its LAN address, else another loopback one."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 9))  # sends nothing: the kernel picks the address it would send from
        address = probe.getsockname()[0]
        if not address.startswith("127."):
            return address
    return "127.0.0.2"


@dataclass
class Bait:
    listener: socket.socket  # on every address of the host
    address: str  # the one the programs aim at
    victim: subprocess.Popen[bytes]
    files: dict[Path, str]  # host path -> its content

    def fill(self, row: Case) -> Case:
        home_file, tmp_file = self.files
        tokens = {
            "@ANYPORT@": str(self.listener.getsockname()[1]),
            "@HOSTIP_BYTES@": ", ".join(self.address.split(".")),
            "@HOSTIP@": self.address,
            "@VICTIM@": str(self.victim.pid),
            "@HOMEFILE@": str(home_file),
            "@TMPFILE@": str(tmp_file),
        }
        program = row.program
        for token, value in tokens.items():
            program = program.replace(token, value)
        return replace(row, program=program)

    def assert_untouched(self, service_pid: int) -> None:
        with pytest.raises(BlockingIOError):  # nothing reached the listener on the host's other address
            self.listener.accept()
        assert self.victim.poll() is None, "the host's victim process was killed"
        for pid, what in ((self.victim.pid, "the host's victim process"), (service_pid, "the sandbox service")):
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
            assert state not in "TtZX", f"{what} is in state {state}"
        for path, content in self.files.items():
            assert path.read_text() == content, f"{path} changed"


@pytest.fixture(scope="module")
def bait() -> Iterator[Bait]:
    files = {directory / BAIT: f"{BAIT} in {directory}\n" for directory in (Path.home(), Path("/tmp"))}
    for path, content in files.items():
        path.write_text(content)
    victim = subprocess.Popen(["sleep", VICTIM])
    try:
        with socket.create_server(("0.0.0.0", 0)) as listener:
            address = host_address()
            with socket.create_connection((address, listener.getsockname()[1]), timeout=5):  # it is reachable
                listener.accept()[0].close()
            listener.setblocking(False)
            yield Bait(listener, address, victim, files)
    finally:
        victim.kill()
        victim.wait()
        for path in files:
            path.unlink()


def check_contained(hostile: Hostile, bait: Bait, row: Case) -> JudgeReport:
    report = check(hostile, bait.fill(row))
    bait.assert_untouched(hostile.service_pid)
    return report


def test_every_language_meets_every_attack() -> None:
    for kind, table in TABLES.items():
        languages = {param.values[0].language for param in table}
        assert languages == set(LANGUAGES) - NOT_APPLICABLE.get(kind, set()), kind


@pytest.mark.parametrize("row", MEMORY)
def test_memory_hog(hostile: Hostile, bait: Bait, row: Case) -> None:
    check_contained(hostile, bait, row)


@pytest.mark.parametrize("row", BOMBS)
def test_process_bomb(hostile: Hostile, bait: Bait, row: Case) -> None:
    report = check_contained(hostile, bait, row)
    # The run's pids cgroup refused forks: the bomb met the process limit (bwrap+rlimits has no such count).
    if row.language != "verilog" and str(report.details.get("isolation")).startswith("bwrap+cgroup"):
        assert report.details.get("process_limit_hits", 0) > 0, report.to_dict()


@pytest.mark.parametrize("row", DISK_FILL)
def test_disk_fill(hostile: Hostile, bait: Bait, row: Case) -> None:
    check_contained(hostile, bait, row)


@pytest.mark.parametrize("row", NETWORK)
def test_network(hostile: Hostile, bait: Bait, row: Case) -> None:
    check_contained(hostile, bait, row)


@pytest.mark.parametrize("row", HOST_FILES)
def test_host_files(hostile: Hostile, bait: Bait, row: Case) -> None:
    check_contained(hostile, bait, row)


@pytest.mark.parametrize("row", SIGNALS)
def test_signals(hostile: Hostile, bait: Bait, row: Case) -> None:
    check_contained(hostile, bait, row)


def test_service_kept_answering(hostile: Hostile) -> None:
    """Last: /healthz and a benign program's verdicts stayed right while every case above ran."""
    service_kept_answering(hostile)
