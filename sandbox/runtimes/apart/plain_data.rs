// Rust values as plain data between a program suite's tests and the program, each in a binary of its own
// (sandbox/languages/rust_apart.py): the program's server and the tests' stub are generated from the prompt's
// signature, so both sides know every type; the bytes carry values only. What the tests' side reads is checked whole
// (counts within the message, booleans 0 or 1, chars and strings valid, no duplicate keys, nothing left over): a reply
// that is not the declared type's value fails the test. Messages on a pipe: a 4-byte length, then the bytes.
// Built once as a library both link (`judge_codec`, sandbox/languages/rust.py).
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::Hash;
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::os::unix::io::FromRawFd;

pub struct Malformed;

pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }
    fn bytes(&mut self, size: usize) -> Result<&'a [u8], Malformed> {
        if self.bytes.len() - self.at < size {
            return Err(Malformed);
        }
        self.at += size;
        Ok(&self.bytes[self.at - size..self.at])
    }
    fn count(&mut self) -> Result<usize, Malformed> {
        let n = u32::from_le_bytes(self.bytes(4)?.try_into().unwrap()) as usize;
        if n > self.bytes.len() - self.at {
            return Err(Malformed); // each element takes a byte at least
        }
        Ok(n)
    }
    pub fn finish(&self) -> Result<(), Malformed> {
        if self.at == self.bytes.len() { Ok(()) } else { Err(Malformed) }
    }
}

pub trait Put {
    fn put(&self, out: &mut Vec<u8>);
}
pub trait Take: Sized {
    fn take(input: &mut Reader) -> Result<Self, Malformed>;
}

fn put_count(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl Put for $t {
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
        impl Take for $t {
            fn take(input: &mut Reader) -> Result<Self, Malformed> {
                Ok(<$t>::from_le_bytes(input.bytes(std::mem::size_of::<$t>())?.try_into().unwrap()))
            }
        }
    )*};
}
numbers!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);

impl Put for () {
    fn put(&self, _: &mut Vec<u8>) {}
}
impl Take for () {
    fn take(_: &mut Reader) -> Result<Self, Malformed> {
        Ok(())
    }
}
impl Put for bool {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
}
impl Take for bool {
    fn take(input: &mut Reader) -> Result<Self, Malformed> {
        match input.bytes(1)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Malformed),
        }
    }
}
impl Put for char {
    fn put(&self, out: &mut Vec<u8>) {
        (*self as u32).put(out);
    }
}
impl Take for char {
    fn take(input: &mut Reader) -> Result<Self, Malformed> {
        char::from_u32(u32::take(input)?).ok_or(Malformed)
    }
}
impl Put for str {
    fn put(&self, out: &mut Vec<u8>) {
        put_count(out, self.len());
        out.extend_from_slice(self.as_bytes());
    }
}
impl Put for String {
    fn put(&self, out: &mut Vec<u8>) {
        self.as_str().put(out);
    }
}
impl Take for String {
    fn take(input: &mut Reader) -> Result<Self, Malformed> {
        let n = input.count()?;
        String::from_utf8(input.bytes(n)?.to_vec()).map_err(|_| Malformed)
    }
}
impl<T: Put + ?Sized> Put for &T {
    fn put(&self, out: &mut Vec<u8>) {
        (**self).put(out);
    }
}
impl<T: Put + ?Sized> Put for &mut T {
    fn put(&self, out: &mut Vec<u8>) {
        (**self).put(out);
    }
}
impl<T: Put> Put for [T] {
    fn put(&self, out: &mut Vec<u8>) {
        put_count(out, self.len());
        for item in self {
            item.put(out);
        }
    }
}
impl<T: Put> Put for Vec<T> {
    fn put(&self, out: &mut Vec<u8>) {
        self.as_slice().put(out);
    }
}
impl<T: Take> Take for Vec<T> {
    fn take(input: &mut Reader) -> Result<Self, Malformed> {
        (0..input.count()?).map(|_| T::take(input)).collect()
    }
}
impl<T: Put> Put for Option<T> {
    fn put(&self, out: &mut Vec<u8>) {
        self.is_some().put(out);
        if let Some(value) = self {
            value.put(out);
        }
    }
}
impl<T: Take> Take for Option<T> {
    fn take(input: &mut Reader) -> Result<Self, Malformed> {
        Ok(if bool::take(input)? { Some(T::take(input)?) } else { None })
    }
}
macro_rules! tuples {
    ($(($($name:ident),+))*) => {$(
        impl<$($name: Put),+> Put for ($($name,)+) {
            #[allow(non_snake_case)]
            fn put(&self, out: &mut Vec<u8>) {
                let ($($name,)+) = self;
                $($name.put(out);)+
            }
        }
        impl<$($name: Take),+> Take for ($($name,)+) {
            fn take(input: &mut Reader) -> Result<Self, Malformed> {
                Ok(($($name::take(input)?,)+))
            }
        }
    )*};
}
tuples!((A) (A, B) (A, B, C) (A, B, C, D) (A, B, C, D, E) (A, B, C, D, E, F));

// Maps and sets: a count, then the elements; a key twice is not a map's value.
macro_rules! keyed {
    ($($map:ident<K $(: $bound:ident)*, V>)* ; $($set:ident<K $(: $sbound:ident)*>)*) => {
        $(
            impl<K: Put, V: Put> Put for $map<K, V> {
                fn put(&self, out: &mut Vec<u8>) {
                    put_count(out, self.len());
                    for (key, value) in self {
                        key.put(out);
                        value.put(out);
                    }
                }
            }
            impl<K: Take $(+ $bound)*, V: Take> Take for $map<K, V> {
                fn take(input: &mut Reader) -> Result<Self, Malformed> {
                    let mut map = $map::new();
                    for _ in 0..input.count()? {
                        let key = K::take(input)?;
                        if map.insert(key, V::take(input)?).is_some() {
                            return Err(Malformed);
                        }
                    }
                    Ok(map)
                }
            }
        )*
        $(
            impl<K: Put> Put for $set<K> {
                fn put(&self, out: &mut Vec<u8>) {
                    put_count(out, self.len());
                    for key in self {
                        key.put(out);
                    }
                }
            }
            impl<K: Take $(+ $sbound)*> Take for $set<K> {
                fn take(input: &mut Reader) -> Result<Self, Malformed> {
                    let mut set = $set::new();
                    for _ in 0..input.count()? {
                        if !set.insert(K::take(input)?) {
                            return Err(Malformed);
                        }
                    }
                    Ok(set)
                }
            }
        )*
    };
}
keyed!(HashMap<K: Eq: Hash, V> BTreeMap<K: Ord, V> ; HashSet<K: Eq: Hash> BTreeSet<K: Ord>);

// A message: its length, then its bytes. read_message: None at the end of the pipe (the other side is gone).
pub fn write_message(fd: i32, bytes: &[u8]) -> bool {
    let mut file = ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    let mut framed = Vec::with_capacity(bytes.len() + 4);
    put_count(&mut framed, bytes.len());
    framed.extend_from_slice(bytes);
    file.write_all(&framed).is_ok()
}

pub fn read_message(fd: i32) -> Option<Vec<u8>> {
    let mut file = ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    let mut size = [0u8; 4];
    file.read_exact(&mut size).ok()?;
    let mut bytes = vec![0u8; u32::from_le_bytes(size) as usize];
    file.read_exact(&mut bytes).ok()?;
    Some(bytes)
}

fn write_raw(fd: i32, bytes: &[u8]) -> bool {
    ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) }).write_all(bytes).is_ok()
}

// --- the program's side: its server ------------------------------------------------------------------------------

pub fn refused() -> ! {
    panic!("the tests sent a request that is not the declared arguments");
}

/// Answers each request on fd 3 with `answer`'s reply on fd 4, until the tests are done; where the program panicked,
/// the reply says so with its message.
pub fn serve(answer: fn(&[u8]) -> Vec<u8>) {
    while let Some(request) = read_message(3) {
        let reply = match std::panic::catch_unwind(|| answer(&request)) {
            Ok(reply) => reply,
            Err(panic) => {
                let what = panic.downcast_ref::<&str>().map(|s| s.to_string());
                let what = what.or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_default();
                let mut reply = vec![1u8];
                what.put(&mut reply);
                reply
            }
        };
        let _ = std::io::stdout().flush();
        if !write_message(4, &reply) {
            break;
        }
    }
}

// --- the tests' side -----------------------------------------------------------------------------------------------

pub fn refuse() -> ! {
    eprintln!("the program's reply is not a value of the declared type");
    std::process::exit(1);
}

/// The program's reply to a call: its value's bytes; where it panicked, so do the tests.
pub fn ask(arguments: &[u8]) -> Vec<u8> {
    let reply = if write_message(4, arguments) { read_message(3) } else { None };
    let reply = match reply {
        Some(reply) if !reply.is_empty() => reply,
        _ => {
            eprintln!("the program ended before its tests did");
            std::process::exit(1);
        }
    };
    match reply[0] {
        0 => reply[1..].to_vec(),
        1 => {
            let what = String::take(&mut Reader::new(&reply[1..])).unwrap_or_default();
            panic!("the program panicked: {}", what);
        }
        _ => refuse(),
    }
}

/// Says on fd 5 that the tests' main returned: they all ran.
pub fn tests_done() {
    let _ = std::io::stdout().flush();
    if !write_raw(5, b"done") {
        std::process::exit(1);
    }
}
