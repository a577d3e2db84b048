// D values as plain data between a program suite's tests and the program, each in a binary of its own
// (sandbox/languages/d_apart.py, which puts this text after each side's code). Both sides are generated from the
// prompt's signature, so both know every type; the bytes carry values only: booleans, characters, integers,
// floats, strings, and arrays, associative arrays, Tuples and Nullables of them. What the tests' side reads is
// checked whole (counts within the message, booleans 0 or 1, strings valid UTF-8, no duplicate keys, nothing left
// over): a reply that is not the declared type's value fails the test. Messages on a pipe: a 4-byte length, then the
// bytes. Its imports are each function's own, so none of them reaches the code it is put after.

class JudgeMalformed : Exception {
    this() { super("the program's reply is not a value of the declared type"); }
}

void judgePut(T)(ref ubyte[] bytes, T value) {
    import std.traits : isAssociativeArray, isDynamicArray, isFloatingPoint, isIntegral, isSomeChar, isStaticArray,
        Unqual;
    import std.typecons : isTuple, Nullable;
    alias U = Unqual!T;
    static if (is(U == bool)) {
        bytes ~= value ? 1 : 0;
    } else static if (isIntegral!U || isFloatingPoint!U || isSomeChar!U) {
        U plain = value;
        bytes ~= (cast(ubyte*) &plain)[0 .. U.sizeof];
    } else static if (is(U == string)) {
        judgePut(bytes, cast(uint) value.length);
        bytes ~= cast(const(ubyte)[]) value;
    } else static if (isDynamicArray!U) {
        judgePut(bytes, cast(uint) value.length);
        foreach (item; value) judgePut(bytes, item);
    } else static if (isStaticArray!U) {
        foreach (item; value) judgePut(bytes, item);
    } else static if (isAssociativeArray!U) {
        judgePut(bytes, cast(uint) value.length);
        foreach (key, item; value) {
            judgePut(bytes, key);
            judgePut(bytes, item);
        }
    } else static if (isTuple!U) {
        foreach (i, _; U.Types) judgePut(bytes, value[i]);
    } else static if (is(U == Nullable!X, X)) {
        judgePut(bytes, !value.isNull);
        if (!value.isNull) judgePut(bytes, value.get);
    } else {
        static assert(false, "not plain data: " ~ T.stringof);
    }
}

struct JudgeReader {
    const(ubyte)[] bytes;
    size_t at;

    const(ubyte)[] take(size_t n) {
        if (n > bytes.length - at) throw new JudgeMalformed;
        auto taken = bytes[at .. at + n];
        at += n;
        return taken;
    }

    size_t count() {
        auto n = get!uint();
        if (n > bytes.length - at) throw new JudgeMalformed;  // each element takes a byte at least
        return n;
    }

    /// All of it was read.
    void done() {
        if (at != bytes.length) throw new JudgeMalformed;
    }

    T get(T)() {
        import std.traits : isAssociativeArray, isDynamicArray, isFloatingPoint, isIntegral, isSomeChar,
            isStaticArray, KeyType, Unqual, ValueType;
        import std.typecons : isTuple, Nullable;
        import std.utf : UTFException, validate;
        alias U = Unqual!T;
        static if (is(U == bool)) {
            auto bit = take(1)[0];
            if (bit > 1) throw new JudgeMalformed;
            return bit == 1;
        } else static if (isIntegral!U || isFloatingPoint!U || isSomeChar!U) {
            U plain;
            (cast(ubyte*) &plain)[0 .. U.sizeof] = take(U.sizeof)[];
            return plain;
        } else static if (is(U == string)) {
            auto text = cast(string) take(count()).idup;
            try validate(text);
            catch (UTFException) throw new JudgeMalformed;
            return text;
        } else static if (isDynamicArray!U) {
            alias E = Unqual!(typeof(U.init[0]));
            E[] items;
            foreach (i; 0 .. count()) items ~= get!E();
            return cast(T) items;
        } else static if (isStaticArray!U) {
            U items;
            foreach (ref item; items) item = get!(typeof(item))();
            return items;
        } else static if (isAssociativeArray!U) {
            Unqual!(ValueType!U)[Unqual!(KeyType!U)] map;
            foreach (i; 0 .. count()) {
                auto key = get!(Unqual!(KeyType!U))();
                if (key in map) throw new JudgeMalformed;
                map[key] = get!(Unqual!(ValueType!U))();
            }
            return cast(T) map;
        } else static if (isTuple!U) {
            U result;
            foreach (i, E; U.Types) result[i] = get!E();
            return result;
        } else static if (is(U == Nullable!X, X)) {
            return get!bool() ? U(get!X()) : U.init;
        } else {
            static assert(false, "not plain data: " ~ T.stringof);
        }
    }
}

void judgeSend(int fd, const(ubyte)[] message) {
    import core.sys.posix.unistd : write;
    ubyte[] framed;
    judgePut(framed, cast(uint) message.length);
    framed ~= message;
    for (size_t at = 0; at < framed.length;) {
        auto written = write(fd, framed.ptr + at, framed.length - at);
        if (written <= 0) throw new Exception("the other side is gone");
        at += written;
    }
}

/// The next message, or null at the end of the pipe (the other side is gone).
ubyte[] judgeReceive(int fd) {
    import core.sys.posix.unistd : read;
    ubyte[] readFully(size_t n) {
        auto bytes = new ubyte[n];
        for (size_t at = 0; at < n;) {
            auto got = read(fd, bytes.ptr + at, n - at);
            if (got <= 0) return null;
            at += got;
        }
        return bytes;
    }
    auto head = readFully(4);
    if (head is null) return null;
    auto size = JudgeReader(head).get!uint();
    auto message = size == 0 ? new ubyte[0] : readFully(size);
    return message is null ? null : message;
}

// --- the program's side: its server -------------------------------------------------------------------------------

/// Answers each request on fd 3 on fd 4, by `answer`, until the tests are done; what the program throws goes to the
/// tests, which throw it.
void judgeServe(void delegate(ref JudgeReader, ref ubyte[]) answer) {
    import std.stdio : stdout;
    for (auto request = judgeReceive(3); request !is null; request = judgeReceive(3)) {
        ubyte[] reply = [0];
        auto reader = JudgeReader(request);
        try {
            answer(reader, reply);
        } catch (JudgeMalformed e) {
            throw e;
        } catch (Throwable thrown) {  // the program's: the tests see it thrown
            reply = [1];
            judgePut(reply, thrown.msg.idup);
        }
        stdout.flush();
        judgeSend(4, reply);
    }
    stdout.flush();
}

// --- the tests' side ----------------------------------------------------------------------------------------------

void judgeRefuse(string why) {
    import core.stdc.stdlib : exit;
    import std.stdio : stderr, stdout;
    stdout.flush();
    stderr.writeln(why);
    stderr.flush();
    exit(1);
}

/// The program's answer to a call of the entry point with `arguments` (the stub in the tests' own code): what it
/// returned, with the arrays' elements and the associative arrays it changed copied back into the arguments.
R judgeAsk(R, Arguments...)(Arguments arguments) {
    import std.traits : isAssociativeArray, isDynamicArray, isMutable;
    ubyte[] request;
    foreach (argument; arguments) judgePut(request, argument);
    try judgeSend(4, request);
    catch (Exception) judgeRefuse("the program ended before its tests did");
    auto reply = judgeReceive(3);
    if (reply is null || reply.length == 0) judgeRefuse("the program ended before its tests did");
    auto reader = JudgeReader(reply, 1);
    try {
        if (reply[0] == 1) throw new Exception("the program threw: " ~ reader.get!string());
        if (reply[0] != 0) throw new JudgeMalformed;
        static if (!is(R == void)) auto result = reader.get!R();
        foreach (i, A; Arguments) {
            static if (isDynamicArray!A && !is(A : const(char)[])) {
                auto changed = reader.get!A();
                static if (isMutable!(typeof(arguments[i][0]))) {
                    if (changed.length == arguments[i].length) arguments[i][] = changed[];
                }
            } else static if (isAssociativeArray!A) {
                auto changed = reader.get!A();
                static if (isMutable!A) {
                    arguments[i].clear();
                    foreach (key, item; changed) arguments[i][key] = item;
                }
            }
        }
        reader.done();
        static if (!is(R == void)) return result;
    } catch (JudgeMalformed e) {
        judgeRefuse(e.msg);
        assert(0);
    }
}

/// The arguments the tests may see changed in place, after the result: arrays (not strings) and associative arrays.
void judgeGiveBack(Arguments...)(ref ubyte[] reply, Arguments arguments) {
    import std.traits : isAssociativeArray, isDynamicArray;
    foreach (i, A; Arguments) {
        static if ((isDynamicArray!A && !is(A : const(char)[])) || isAssociativeArray!A) judgePut(reply, arguments[i]);
    }
}

/// Says on fd 5 that the tests all ran (last in their last unittest block).
void judgeDone() {
    import core.sys.posix.unistd : write;
    write(5, "done".ptr, 4);
}
