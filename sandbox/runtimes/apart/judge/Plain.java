package judge;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.javatuples.Tuple;

/**
 * Java values as plain data between a program suite's tests and the program, each in a JVM of its own
 * (sandbox/languages/java_apart.py): the program's server and the tests' stub are generated from the prompt's
 * signature, so both sides know every type; the bytes carry values only. What the tests' side reads is checked whole
 * (counts within the message, booleans 0 or 1, strings valid UTF-8, no duplicate keys, nothing left over): a reply
 * that is not the declared type's value fails the test. Messages on a pipe: a 4-byte length, then the bytes. Built
 * once as a jar both JVMs load (`make languages`).
 */
public final class Plain {
    private Plain() {}

    /** A declared type, as `new Plain.Of<ArrayList<Long>>() {}` writes it. */
    public abstract static class Of<T> {
        final Type type = ((ParameterizedType) getClass().getGenericSuperclass()).getActualTypeArguments()[0];
    }

    static final class Malformed extends IOException {
        Malformed() {
            super("the program's reply is not a value of the declared type");
        }
    }

    // --- values ---------------------------------------------------------------------------------------------------

    static void write(DataOutputStream out, Type type, Object value) throws IOException {
        if (value == null) {
            out.writeByte(0);
            return;
        }
        out.writeByte(1);
        Class<?> raw = raw(type);
        if (raw == Long.class) out.writeLong((Long) value);
        else if (raw == Integer.class) out.writeInt((Integer) value);
        else if (raw == Short.class) out.writeShort((Short) value);
        else if (raw == Byte.class) out.writeByte((Byte) value);
        else if (raw == Double.class) out.writeLong(Double.doubleToRawLongBits((Double) value));
        else if (raw == Float.class) out.writeInt(Float.floatToRawIntBits((Float) value));
        else if (raw == Boolean.class) out.writeBoolean((Boolean) value);
        else if (raw == Character.class) out.writeChar((Character) value);
        else if (raw == String.class) {
            byte[] bytes = ((String) value).getBytes(StandardCharsets.UTF_8);
            out.writeInt(bytes.length);
            out.write(bytes);
        } else if (Collection.class.isAssignableFrom(raw)) {
            Collection<?> items = (Collection<?>) value;
            out.writeInt(items.size());
            for (Object item : items) write(out, argument(type, 0), item);
        } else if (Map.class.isAssignableFrom(raw)) {
            Map<?, ?> map = (Map<?, ?>) value;
            out.writeInt(map.size());
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                write(out, argument(type, 0), entry.getKey());
                write(out, argument(type, 1), entry.getValue());
            }
        } else if (raw == Optional.class) {
            Optional<?> optional = (Optional<?>) value;
            out.writeBoolean(optional.isPresent());
            if (optional.isPresent()) write(out, argument(type, 0), optional.get());
        } else if (Tuple.class.isAssignableFrom(raw)) {
            Tuple tuple = (Tuple) value;
            for (int i = 0; i < tuple.getSize(); i++) write(out, argument(type, i), tuple.getValue(i));
        } else {
            throw new IllegalArgumentException("not plain data: " + type);
        }
    }

    static Object read(DataInputStream in, Type type) throws IOException {
        int present = in.readUnsignedByte();
        if (present == 0) return null;
        if (present != 1) throw new Malformed();
        Class<?> raw = raw(type);
        if (raw == Long.class) return in.readLong();
        if (raw == Integer.class) return in.readInt();
        if (raw == Short.class) return in.readShort();
        if (raw == Byte.class) return in.readByte();
        if (raw == Double.class) return Double.longBitsToDouble(in.readLong());
        if (raw == Float.class) return Float.intBitsToFloat(in.readInt());
        if (raw == Boolean.class) {
            int bit = in.readUnsignedByte();
            if (bit > 1) throw new Malformed();
            return bit == 1;
        }
        if (raw == Character.class) return in.readChar();
        if (raw == String.class) {
            byte[] bytes = new byte[count(in)];
            in.readFully(bytes);
            try {
                return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(bytes)).toString();
            } catch (CharacterCodingException e) {
                throw new Malformed();
            }
        }
        if (Collection.class.isAssignableFrom(raw)) {
            Collection<Object> items = Set.class.isAssignableFrom(raw) ? new HashSet<>() : new ArrayList<>();
            for (int n = count(in); n > 0; n--) {
                if (!items.add(read(in, argument(type, 0)))) throw new Malformed(); // a set's element twice
            }
            return items;
        }
        if (Map.class.isAssignableFrom(raw)) {
            Map<Object, Object> map = new HashMap<>();
            for (int n = count(in); n > 0; n--) {
                Object key = read(in, argument(type, 0));
                if (map.containsKey(key)) throw new Malformed();
                map.put(key, read(in, argument(type, 1)));
            }
            return map;
        }
        if (raw == Optional.class) {
            if (!in.readBoolean()) return Optional.empty();
            Object value = read(in, argument(type, 0));
            if (value == null) throw new Malformed();
            return Optional.of(value);
        }
        if (Tuple.class.isAssignableFrom(raw)) {
            int size = ((ParameterizedType) type).getActualTypeArguments().length;
            Object[] values = new Object[size];
            Class<?>[] erased = new Class<?>[size];
            for (int i = 0; i < size; i++) {
                values[i] = read(in, argument(type, i));
                erased[i] = Object.class;
            }
            try {
                return raw.getMethod("with", erased).invoke(null, values);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalArgumentException("not plain data: " + type);
    }

    private static int count(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > in.available()) throw new Malformed(); // each element takes a byte at least
        return n;
    }

    private static Class<?> raw(Type type) {
        Class<?> raw = (Class<?>) (type instanceof ParameterizedType ? ((ParameterizedType) type).getRawType() : type);
        return raw.isPrimitive() ? boxed(raw) : raw;
    }

    private static Class<?> boxed(Class<?> primitive) {
        if (primitive == long.class) return Long.class;
        if (primitive == int.class) return Integer.class;
        if (primitive == short.class) return Short.class;
        if (primitive == byte.class) return Byte.class;
        if (primitive == double.class) return Double.class;
        if (primitive == float.class) return Float.class;
        if (primitive == boolean.class) return Boolean.class;
        if (primitive == char.class) return Character.class;
        return Void.class;
    }

    private static Type argument(Type type, int index) {
        return ((ParameterizedType) type).getActualTypeArguments()[index];
    }

    // --- messages -------------------------------------------------------------------------------------------------

    private static void send(FileOutputStream out, byte[] bytes) throws IOException {
        out.write(ByteBuffer.allocate(4).putInt(bytes.length).array());
        out.write(bytes);
        out.flush();
    }

    /** The next message, or null at the end of the pipe (the other side is gone). */
    private static byte[] receive(DataInputStream in) throws IOException {
        try {
            byte[] bytes = new byte[in.readInt()];
            in.readFully(bytes);
            return bytes;
        } catch (EOFException e) {
            return null;
        }
    }

    private static FileOutputStream opened(int fd) throws IOException {
        return new FileOutputStream("/dev/fd/" + fd, true);
    }

    // --- the program's side: its server -----------------------------------------------------------------------------

    /** One request: its arguments read in order, then the reply with the result and the arguments changed in place. */
    public static final class Call {
        private final DataInputStream in;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final DataOutputStream out = new DataOutputStream(bytes);

        Call(byte[] request) {
            in = new DataInputStream(new ByteArrayInputStream(request));
            bytes.write(0);
        }

        @SuppressWarnings("unchecked")
        public <T> T next(Of<T> of) throws IOException {
            return (T) read(in, of.type);
        }

        /** All the arguments were read: the request held nothing more. */
        public void done() throws IOException {
            if (in.available() != 0) throw new IOException("the tests sent more than the declared arguments");
        }

        /** The result, of its declared type `of`. */
        public <T> Call returned(Of<T> of, T result) throws IOException {
            write(out, of.type, result);
            return this;
        }

        /** An argument the tests may see changed in place (a collection or map), after the result. */
        public <T> Call changed(Of<T> of, T argument) throws IOException {
            write(out, of.type, argument);
            return this;
        }
    }

    /** The program's answers: one call of `answer` per request on fd 3, its reply on fd 4, until the tests are done. */
    public interface Server {
        Call answer(Call call) throws Throwable;
    }

    public static void serve(Server server) throws IOException {
        DataInputStream requests = new DataInputStream(new FileInputStream("/dev/fd/3"));
        FileOutputStream replies = opened(4);
        for (byte[] request = receive(requests); request != null; request = receive(requests)) {
            byte[] reply;
            try {
                Call call = server.answer(new Call(request));
                call.out.flush();
                reply = call.bytes.toByteArray();
            } catch (Throwable thrown) { // the program's: the tests see it thrown
                ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                bytes.write(1);
                write(new DataOutputStream(bytes), String.class, thrown.toString());
                reply = bytes.toByteArray();
            }
            System.out.flush();
            send(replies, reply);
        }
        System.out.flush();
    }

    // --- the tests' side ------------------------------------------------------------------------------------------

    private static DataInputStream replies;
    private static FileOutputStream requests;

    /**
     * The program's answer to a call of `owner`'s method `name` (the stub in the tests' own class, whose declared
     * types read the reply): what it returned, with the collections and maps it changed copied back into `arguments`;
     * what it threw is thrown as a RuntimeException.
     */
    public static Object ask(Class<?> owner, String name, Object... arguments) {
        try {
            Method stub = stub(owner, name, arguments.length);
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            Type[] types = stub.getGenericParameterTypes();
            for (int i = 0; i < arguments.length; i++) write(out, types[i], arguments[i]);
            out.flush();
            if (requests == null) {
                requests = opened(4);
                replies = new DataInputStream(new FileInputStream("/dev/fd/3"));
            }
            send(requests, bytes.toByteArray());
            byte[] reply = receive(replies);
            if (reply == null || reply.length == 0) refuse("the program ended before its tests did");
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(reply, 1, reply.length - 1));
            if (reply[0] == 1) throw new RuntimeException("the program threw: " + read(in, String.class));
            if (reply[0] != 0) throw new Malformed();
            Object result = stub.getReturnType() == void.class ? null : read(in, stub.getGenericReturnType());
            for (int i = 0; i < arguments.length; i++) {
                if (changesInPlace(types[i])) copyBack(arguments[i], read(in, types[i]));
            }
            if (in.available() != 0) throw new Malformed();
            return result;
        } catch (IOException e) {
            refuse(e.getMessage());
            return null;
        }
    }

    /** Whether an argument of this type may come back changed: a collection or a map (the server sends it back). */
    static boolean changesInPlace(Type type) {
        Class<?> raw = raw(type);
        return Collection.class.isAssignableFrom(raw) || Map.class.isAssignableFrom(raw);
    }

    private static Method stub(Class<?> owner, String name, int parameters) {
        for (Method method : owner.getDeclaredMethods()) {
            if (method.getName().equals(name) && method.getParameterCount() == parameters) return method;
        }
        throw new IllegalStateException("no stub " + name);
    }

    @SuppressWarnings("unchecked")
    private static void copyBack(Object original, Object changed) {
        if (original == null || original.equals(changed)) return; // unchanged: a fixed-size list stays as it was
        if (original instanceof List && changed instanceof List && ((List<?>) original).size() == ((List<?>) changed).size()) {
            List<Object> list = (List<Object>) original;
            for (int i = 0; i < list.size(); i++) list.set(i, ((List<?>) changed).get(i));
        } else if (original instanceof Map) {
            ((Map<Object, Object>) original).clear();
            ((Map<Object, Object>) original).putAll((Map<?, ?>) changed);
        } else {
            ((Collection<Object>) original).clear();
            ((Collection<Object>) original).addAll((Collection<?>) changed);
        }
    }

    private static void refuse(String why) {
        System.out.flush();
        System.err.println(why);
        Runtime.getRuntime().halt(1);
    }

    /** The tests' main, as the tests' unit calls it (java_apart.py's JudgeTests). */
    public interface Tests {
        void run() throws Throwable;
    }

    /** Runs the tests' main, then says on fd 5 that they all ran (what they throw ends the JVM before it). */
    public static void runTests(Tests tests) throws Throwable {
        tests.run();
        System.out.flush();
        try (FileOutputStream said = opened(5)) {
            said.write("done".getBytes(StandardCharsets.US_ASCII));
        }
    }
}
