// C# values as plain data between a program suite's tests and the program, each in a Mono process of its own
// (sandbox/languages/csharp_apart.py): the program's server and the tests' stub are generated from the prompt's
// signature, so both sides know every type; the bytes carry values only. What the tests' side reads is checked whole
// (counts within the message, booleans 0 or 1, strings valid UTF-8, no duplicate keys or set elements, no null for a
// value type, nothing left over): a reply that is not the declared type's value fails the test. Messages on a pipe:
// a 4-byte length, then the bytes. Built once as a library both sides reference (`make languages`).
using System;
using System.Collections;
using System.Collections.Generic;
using System.IO;
using System.Text;

namespace Judge {
    public sealed class MalformedReply : IOException {
        public MalformedReply() : base("the program's reply is not a value of the declared type") { }
    }

    public static class Plain {
        static readonly UTF8Encoding Strict = new UTF8Encoding(false, true);

        // --- values ---------------------------------------------------------------------------------------------

        static void Write(BinaryWriter output, Type type, object value) {
            if (value == null) {
                output.Write((byte)0);
                return;
            }
            output.Write((byte)1);
            Type bare = Nullable.GetUnderlyingType(type) ?? type;
            if (bare == typeof(long)) output.Write((long)value);
            else if (bare == typeof(int)) output.Write((int)value);
            else if (bare == typeof(short)) output.Write((short)value);
            else if (bare == typeof(byte)) output.Write((byte)value);
            else if (bare == typeof(double)) output.Write((double)value);
            else if (bare == typeof(float)) output.Write((float)value);
            else if (bare == typeof(bool)) output.Write((bool)value);
            else if (bare == typeof(char)) output.Write((ushort)(char)value);
            else if (bare == typeof(string)) {
                byte[] bytes = Encoding.UTF8.GetBytes((string)value);
                output.Write(bytes.Length);
                output.Write(bytes);
            } else if (IsGeneric(bare, typeof(Dictionary<,>))) {
                var map = (IDictionary)value;
                Type[] types = bare.GetGenericArguments();
                output.Write(map.Count);
                foreach (DictionaryEntry entry in map) {
                    Write(output, types[0], entry.Key);
                    Write(output, types[1], entry.Value);
                }
            } else if (IsGeneric(bare, typeof(List<>)) || IsGeneric(bare, typeof(HashSet<>))) {
                var items = new List<object>();
                foreach (object item in (IEnumerable)value) items.Add(item);
                output.Write(items.Count);
                foreach (object item in items) Write(output, bare.GetGenericArguments()[0], item);
            } else if (IsTuple(bare)) {
                Type[] types = bare.GetGenericArguments();
                for (int i = 0; i < types.Length; i++) Write(output, types[i], bare.GetProperty("Item" + (i + 1)).GetValue(value));
            } else {
                throw new ArgumentException("not plain data: " + type);
            }
        }

        static object Read(BinaryReader input, Type type) {
            byte present = input.ReadByte();
            if (present == 0) {
                if (type.IsValueType && Nullable.GetUnderlyingType(type) == null) throw new MalformedReply();
                return null;
            }
            if (present != 1) throw new MalformedReply();
            Type bare = Nullable.GetUnderlyingType(type) ?? type;
            if (bare == typeof(long)) return input.ReadInt64();
            if (bare == typeof(int)) return input.ReadInt32();
            if (bare == typeof(short)) return input.ReadInt16();
            if (bare == typeof(byte)) return input.ReadByte();
            if (bare == typeof(double)) return input.ReadDouble();
            if (bare == typeof(float)) return input.ReadSingle();
            if (bare == typeof(bool)) {
                byte bit = input.ReadByte();
                if (bit > 1) throw new MalformedReply();
                return bit == 1;
            }
            if (bare == typeof(char)) return (char)input.ReadUInt16();
            if (bare == typeof(string)) {
                byte[] bytes = input.ReadBytes(Count(input));
                try {
                    return Strict.GetString(bytes);
                } catch (ArgumentException) {
                    throw new MalformedReply();
                }
            }
            if (IsGeneric(bare, typeof(Dictionary<,>))) {
                var map = (IDictionary)Activator.CreateInstance(bare);
                Type[] types = bare.GetGenericArguments();
                for (int n = Count(input); n > 0; n--) {
                    object key = Read(input, types[0]);
                    if (key == null || map.Contains(key)) throw new MalformedReply();
                    map.Add(key, Read(input, types[1]));
                }
                return map;
            }
            if (IsGeneric(bare, typeof(List<>))) {
                var list = (IList)Activator.CreateInstance(bare);
                for (int n = Count(input); n > 0; n--) list.Add(Read(input, bare.GetGenericArguments()[0]));
                return list;
            }
            if (IsGeneric(bare, typeof(HashSet<>))) {
                object set = Activator.CreateInstance(bare);
                var add = bare.GetMethod("Add");
                for (int n = Count(input); n > 0; n--) {
                    if (!(bool)add.Invoke(set, new[] { Read(input, bare.GetGenericArguments()[0]) })) throw new MalformedReply();
                }
                return set;
            }
            if (IsTuple(bare)) {
                Type[] types = bare.GetGenericArguments();
                var values = new object[types.Length];
                for (int i = 0; i < types.Length; i++) values[i] = Read(input, types[i]);
                return Activator.CreateInstance(bare, values);
            }
            throw new ArgumentException("not plain data: " + type);
        }

        static int Count(BinaryReader input) {
            int n = input.ReadInt32();
            if (n < 0 || n > input.BaseStream.Length - input.BaseStream.Position) throw new MalformedReply();
            return n; // each element takes a byte at least
        }

        static bool IsGeneric(Type type, Type definition) {
            return type.IsGenericType && type.GetGenericTypeDefinition() == definition;
        }

        static bool IsTuple(Type type) {
            return type.IsGenericType && type.FullName.StartsWith("System.Tuple`", StringComparison.Ordinal);
        }

        /// <summary>Whether an argument of this type may come back changed: a list, set or dictionary.</summary>
        static bool ChangesInPlace(Type type) {
            return IsGeneric(type, typeof(List<>)) || IsGeneric(type, typeof(HashSet<>)) || IsGeneric(type, typeof(Dictionary<,>));
        }

        static void CopyBack(object original, object changed) {
            if (original == null) return;
            if (original is IDictionary) {
                var map = (IDictionary)original;
                map.Clear();
                foreach (DictionaryEntry entry in (IDictionary)changed) map.Add(entry.Key, entry.Value);
            } else if (original is IList) {
                var list = (IList)original;
                list.Clear();
                foreach (object item in (IList)changed) list.Add(item);
            } else {
                Type set = original.GetType();
                set.GetMethod("Clear").Invoke(original, null);
                set.GetMethod("UnionWith").Invoke(original, new[] { changed });
            }
        }

        // --- messages -------------------------------------------------------------------------------------------

        // By path: Mono takes a pipe's descriptor for an invalid handle. FileMode.Open, since Append seeks.
        static FileStream Opened(int fd, FileAccess access) {
            return new FileStream("/dev/fd/" + fd, FileMode.Open, access, FileShare.ReadWrite, 1);
        }

        static void Send(Stream output, byte[] bytes) {
            output.Write(BitConverter.GetBytes(bytes.Length), 0, 4);
            output.Write(bytes, 0, bytes.Length);
            output.Flush();
        }

        /// <summary>The next message, or null at the end of the pipe (the other side is gone).</summary>
        static byte[] Receive(Stream input) {
            byte[] length = ReadFully(input, 4);
            if (length == null) return null;
            int size = BitConverter.ToInt32(length, 0);
            return size < 0 ? null : ReadFully(input, size);
        }

        static byte[] ReadFully(Stream input, int size) {
            var bytes = new byte[size];
            for (int at = 0; at < size;) {
                int read = input.Read(bytes, at, size - at);
                if (read <= 0) return null;
                at += read;
            }
            return bytes;
        }

        // --- the program's side: its server ---------------------------------------------------------------------

        /// <summary>One request: its arguments read in order, then the reply with the result and the arguments
        /// changed in place.</summary>
        public sealed class Call {
            readonly BinaryReader input;
            readonly MemoryStream bytes = new MemoryStream();
            internal readonly BinaryWriter Output;

            internal Call(byte[] request) {
                input = new BinaryReader(new MemoryStream(request));
                Output = new BinaryWriter(bytes);
                Output.Write((byte)0);
            }

            public T Next<T>() {
                return (T)Read(input, typeof(T));
            }

            /// <summary>All the arguments were read: the request held nothing more.</summary>
            public void Done() {
                if (input.BaseStream.Position != input.BaseStream.Length)
                    throw new IOException("the tests sent more than the declared arguments");
            }

            /// <summary>The result, of its declared type.</summary>
            public Call Returned<T>(T result) {
                Write(Output, typeof(T), result);
                return this;
            }

            /// <summary>An argument the tests may see changed in place (a list, set or dictionary), after the
            /// result.</summary>
            public Call Changed<T>(T argument) {
                Write(Output, typeof(T), argument);
                return this;
            }

            internal byte[] Reply() {
                Output.Flush();
                return bytes.ToArray();
            }
        }

        /// <summary>The program's answers: one call of `answer` per request on fd 3, its reply on fd 4, until the
        /// tests are done.</summary>
        public static void Serve(Func<Call, Call> answer) {
            using (FileStream requests = Opened(3, FileAccess.Read))
            using (FileStream replies = Opened(4, FileAccess.Write)) {
                for (byte[] request = Receive(requests); request != null; request = Receive(requests)) {
                    byte[] reply;
                    try {
                        reply = answer(new Call(request)).Reply();
                    } catch (Exception thrown) { // the program's: the tests see it thrown
                        var bytes = new MemoryStream();
                        var output = new BinaryWriter(bytes);
                        output.Write((byte)1);
                        Write(output, typeof(string), thrown.GetType().FullName + ": " + thrown.Message);
                        output.Flush();
                        reply = bytes.ToArray();
                    }
                    Console.Out.Flush();
                    Send(replies, reply);
                }
            }
            Console.Out.Flush();
        }

        // --- the tests' side ------------------------------------------------------------------------------------

        static Stream asked, answered;

        /// <summary>The program's answer to a call of the entry point whose parameters are of `types` (the stub in
        /// the tests' own class): what it returned, with the lists, sets and dictionaries it changed copied back
        /// into `arguments`; what it threw is thrown here.</summary>
        public static TResult Ask<TResult>(object[] arguments, params Type[] types) {
            return (TResult)Exchange(typeof(TResult), arguments, types);
        }

        /// <summary>As Ask, for an entry point that returns nothing.</summary>
        public static void Tell(object[] arguments, params Type[] types) {
            Exchange(null, arguments, types);
        }

        static object Exchange(Type returns, object[] arguments, Type[] types) {
            try {
                var bytes = new MemoryStream();
                var output = new BinaryWriter(bytes);
                for (int i = 0; i < arguments.Length; i++) Write(output, types[i], arguments[i]);
                output.Flush();
                if (asked == null) {
                    asked = Opened(4, FileAccess.Write);
                    answered = Opened(3, FileAccess.Read);
                }
                Send(asked, bytes.ToArray());
                byte[] reply = Receive(answered);
                if (reply == null || reply.Length == 0) Refuse("the program ended before its tests did");
                var input = new BinaryReader(new MemoryStream(reply, 1, reply.Length - 1));
                if (reply[0] == 1) throw new Exception("the program threw: " + Read(input, typeof(string)));
                if (reply[0] != 0) throw new MalformedReply();
                object result = returns == null ? null : Read(input, returns);
                for (int i = 0; i < arguments.Length; i++) {
                    if (ChangesInPlace(types[i])) CopyBack(arguments[i], Read(input, types[i]));
                }
                if (input.BaseStream.Position != input.BaseStream.Length) throw new MalformedReply();
                return result;
            } catch (IOException e) {
                Refuse(e.Message);
                return null;
            }
        }

        static void Refuse(string why) {
            Console.Out.Flush();
            Console.Error.WriteLine(why);
            Console.Error.Flush();
            Environment.Exit(1);
        }

        /// <summary>Runs the tests' main, then says on fd 5 that they all ran (a failed assert ends the process
        /// before it).</summary>
        public static void RunTests(Action tests) {
            tests();
            Console.Out.Flush();
            using (FileStream said = Opened(5, FileAccess.Write)) {
                byte[] done = Encoding.ASCII.GetBytes("done");
                said.Write(done, 0, done.Length);
            }
        }
    }
}
