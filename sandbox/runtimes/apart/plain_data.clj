;; Messages between a program suite's tests and the program, each in a process of its own (sandbox/runner.py
;; run_suite_apart): its length (8 bytes, little-endian), then the value as `pr-str` prints it, read back with
;; clojure.edn (data only: no evaluation, no reader conditionals, tags only #inst and #uuid). Plain data only:
;; nil, booleans, numbers, strings, characters, keywords, symbols, and lists, vectors, maps and sets of them.
;; Synchronous: a test's call waits for its reply.
(ns judge.plain-data
  (:require [clojure.edn :as edn])
  (:import (java.io DataInputStream FileInputStream FileOutputStream EOFException)
           (java.nio ByteBuffer ByteOrder)))

(def message-limit (bit-shift-left 1 30))

(defn plain? [value]
  (letfn [(plain [value depth]
            (and (< depth 1000)
                 (or (nil? value) (boolean? value) (number? value) (string? value) (char? value) (keyword? value)
                     (symbol? value)
                     (and (map? value) (not (record? value)) (every? (fn [[k v]] (and (plain k (inc depth)) (plain v (inc depth)))) value))
                     (and (or (vector? value) (seq? value) (set? value)) (every? #(plain % (inc depth)) value)))))]
    (plain value 0)))

(defn open-in [fd] (DataInputStream. (FileInputStream. (str "/dev/fd/" fd))))
(defn open-out [fd] (FileOutputStream. (str "/dev/fd/" fd) true))

(defn send-message [^FileOutputStream out value]
  (let [body (.getBytes (binding [*print-length* nil *print-level* nil *print-dup* false] (pr-str value)) "UTF-8")
        head (-> (ByteBuffer/allocate 8) (.order ByteOrder/LITTLE_ENDIAN) (.putLong (alength body)) .array)]
    (.write out head)
    (.write out body)
    (.flush out)))

;; [the next message], or nil when the other side closed its end (or sent something cut, too big or not plain data).
(defn receive [^DataInputStream in]
  (try
    (let [head (byte-array 8)
          _ (.readFully in head)
          size (.getLong (.order (ByteBuffer/wrap head) ByteOrder/LITTLE_ENDIAN))]
      (when (<= 0 size message-limit)
        (let [body (byte-array size)
              _ (.readFully in body)
              value (edn/read-string (String. body "UTF-8"))]
          (when (plain? value) [value]))))
    (catch Exception _ nil)))
