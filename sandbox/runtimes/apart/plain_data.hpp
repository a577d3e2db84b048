// C++ values as plain data between a program suite's tests and the program, each in a binary of its own
// (sandbox/languages/cpp_apart.py): the program's server and the tests' stubs are generated from the prompt's
// signature, so both sides know every type; the bytes carry values only. What the tests' side reads is checked
// whole (counts within the message, booleans 0 or 1, no duplicate keys, nothing left over): a reply that is not the
// declared type's value fails the test. Messages on a pipe: a 4-byte length, then the bytes.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace judge_plain {

struct Malformed : std::exception {
    const char *what() const noexcept override { return "the program's reply is not a value of the declared type"; }
};

template <class T> using value_t = std::remove_cv_t<std::remove_reference_t<T>>;
using Writer = std::string;

struct Reader {
    const char *at, *end;
    explicit Reader(const std::string &bytes) : at(bytes.data()), end(bytes.data() + bytes.size()) {}
    void take(void *out, size_t size) {
        if (static_cast<size_t>(end - at) < size) throw Malformed();
        std::memcpy(out, at, size);
        at += size;
    }
    size_t count() {  // of the elements that follow, each at least one byte
        uint32_t n;
        take(&n, sizeof n);
        if (n > static_cast<size_t>(end - at)) throw Malformed();
        return n;
    }
    void finish() const {
        if (at != end) throw Malformed();
    }
};

template <class T, class = void> struct Codec;

template <class T> void put(Writer &out, const T &value) { Codec<T>::put(out, value); }
template <class T> void get(Reader &in, T &value) { Codec<T>::get(in, value); }
inline void put_count(Writer &out, size_t n) {
    uint32_t size = static_cast<uint32_t>(n);
    out.append(reinterpret_cast<const char *>(&size), sizeof size);
}

template <class T> struct Codec<T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>>> {
    static void put(Writer &out, const T &value) { out.append(reinterpret_cast<const char *>(&value), sizeof value); }
    static void get(Reader &in, T &value) { in.take(&value, sizeof value); }
};

template <> struct Codec<bool> {
    static void put(Writer &out, const bool &value) { out.push_back(value ? 1 : 0); }
    static void get(Reader &in, bool &value) {
        unsigned char byte;
        in.take(&byte, 1);
        if (byte > 1) throw Malformed();
        value = byte == 1;
    }
};

template <> struct Codec<std::string> {
    static void put(Writer &out, const std::string &value) {
        put_count(out, value.size());
        out += value;
    }
    static void get(Reader &in, std::string &value) {
        size_t n = in.count();
        value.assign(in.at, n);
        in.at += n;
    }
};

template <class T> struct Codec<std::vector<T>> {
    static void put(Writer &out, const std::vector<T> &value) {
        put_count(out, value.size());
        for (const T &item : value) judge_plain::put(out, item);
    }
    static void get(Reader &in, std::vector<T> &value) {
        value.clear();
        for (size_t n = in.count(); n > 0; n--) {
            T item;
            judge_plain::get(in, item);
            value.push_back(std::move(item));
        }
    }
};

template <> struct Codec<std::vector<bool>> {
    static void put(Writer &out, const std::vector<bool> &value) {
        put_count(out, value.size());
        for (bool item : value) judge_plain::put(out, item);
    }
    static void get(Reader &in, std::vector<bool> &value) {
        value.clear();
        for (size_t n = in.count(); n > 0; n--) {
            bool item;
            judge_plain::get(in, item);
            value.push_back(item);
        }
    }
};

template <class... T> struct Codec<std::tuple<T...>> {
    static void put(Writer &out, const std::tuple<T...> &value) {
        std::apply([&](const T &...items) { (judge_plain::put(out, items), ...); }, value);
    }
    static void get(Reader &in, std::tuple<T...> &value) {
        std::apply([&](T &...items) { (judge_plain::get(in, items), ...); }, value);
    }
};

template <class A, class B> struct Codec<std::pair<A, B>> {
    static void put(Writer &out, const std::pair<A, B> &value) {
        judge_plain::put(out, value.first);
        judge_plain::put(out, value.second);
    }
    static void get(Reader &in, std::pair<A, B> &value) {
        judge_plain::get(in, value.first);
        judge_plain::get(in, value.second);
    }
};

template <class T> struct Codec<std::optional<T>> {
    static void put(Writer &out, const std::optional<T> &value) {
        judge_plain::put(out, value.has_value());
        if (value) judge_plain::put(out, *value);
    }
    static void get(Reader &in, std::optional<T> &value) {
        bool present;
        judge_plain::get(in, present);
        value.reset();
        if (present) {
            T item;
            judge_plain::get(in, item);
            value = std::move(item);
        }
    }
};

// Maps and sets: a count, then the elements; a key twice is not a map's value.
template <class C> struct Keyed {
    static void put(Writer &out, const C &value) {
        put_count(out, value.size());
        for (const auto &item : value) judge_plain::put(out, item);
    }
    static void get(Reader &in, C &value) {
        value.clear();
        for (size_t n = in.count(); n > 0; n--) {
            std::remove_const_t<typename C::key_type> key;
            judge_plain::get(in, key);
            if constexpr (std::is_same_v<typename C::key_type, typename C::value_type>) {
                if (!value.insert(std::move(key)).second) throw Malformed();
            } else {
                typename C::mapped_type mapped;
                judge_plain::get(in, mapped);
                if (!value.emplace(std::move(key), std::move(mapped)).second) throw Malformed();
            }
        }
    }
};
template <class K, class V> struct Codec<std::pair<const K, V>> {
    static void put(Writer &out, const std::pair<const K, V> &value) {
        judge_plain::put(out, value.first);
        judge_plain::put(out, value.second);
    }
};
template <class K, class V, class... R> struct Codec<std::map<K, V, R...>> : Keyed<std::map<K, V, R...>> {};
template <class K, class V, class... R>
struct Codec<std::unordered_map<K, V, R...>> : Keyed<std::unordered_map<K, V, R...>> {};
template <class K, class... R> struct Codec<std::set<K, R...>> : Keyed<std::set<K, R...>> {};
template <class K, class... R> struct Codec<std::unordered_set<K, R...>> : Keyed<std::unordered_set<K, R...>> {};

// A message: its length, then its bytes. read_message: false at the end of the pipe (the other side is gone).
inline void write_message(int fd, const Writer &bytes) {
    Writer framed;
    put_count(framed, bytes.size());
    framed += bytes;
    for (size_t done = 0; done < framed.size();) {
        ssize_t n = ::write(fd, framed.data() + done, framed.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) _exit(1);
        done += static_cast<size_t>(n);
    }
}

inline bool read_exactly(int fd, char *into, size_t size) {
    for (size_t done = 0; done < size;) {
        ssize_t n = ::read(fd, into + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

inline bool read_message(int fd, std::string &bytes) {
    uint32_t size;
    if (!read_exactly(fd, reinterpret_cast<char *>(&size), sizeof size)) return false;
    bytes.resize(size);
    return read_exactly(fd, bytes.data(), size);
}

}  // namespace judge_plain
