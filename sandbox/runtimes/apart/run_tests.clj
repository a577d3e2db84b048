;; The tests' process of a Clojure program suite run apart from the program (sandbox/runner.py run_suite_apart; after
;; plain_data.clj). It reads the tests' forms on stdin and evaluates them in `user`; the names they use that neither
;; they nor Clojure resolve are the program's: asked for on fd 4, answered on fd 3, its functions called there. fd 5
;; hears that the tests all ran (clojure.test says a failed `is` on stdout, which fails the run).
(ns judge.run-tests)
(alias 'plain 'judge.plain-data)  ; defined above, not a library on the class path

(def ^:private channel {:replies (plain/open-in 3) :requests (plain/open-out 4)})
(def ^:private exceptions {"IllegalArgumentException" #(IllegalArgumentException. ^String %)
                           "ArithmeticException" #(ArithmeticException. ^String %)
                           "IndexOutOfBoundsException" #(IndexOutOfBoundsException. ^String %)
                           "NullPointerException" #(NullPointerException. ^String %)})

(defn- ask [request]
  (locking channel
    (plain/send-message (:requests channel) request)
    (if-let [[reply] (plain/receive (:replies channel))]
      reply
      (throw (RuntimeException. "the program ended before its tests did")))))

(defn- stub [name]
  (fn [& args]
    (let [reply (ask (list* 'call name args))]
      (cond
        (and (seq? reply) (= 'value (first reply))) (second reply)
        (and (seq? reply) (= 'error (first reply)))
        (throw ((get exceptions (nth reply 2 nil) #(RuntimeException. ^String %)) (str "in the program: " (second reply))))
        :else (throw (RuntimeException. "the program answered what is not a reply"))))))

(defn- symbols-of [form]
  (filter symbol? (tree-seq coll? seq form)))

(let [forms (binding [*read-eval* false]
              (let [reader (clojure.lang.LineNumberingPushbackReader. (java.io.InputStreamReader. System/in "UTF-8"))]
                (doall (take-while #(not= ::end %) (repeatedly #(read {:eof ::end} reader))))))
      said (plain/open-out 5)]
  (binding [*ns* (create-ns 'user)]
    (refer-clojure)
    (doseq [form forms :when (and (seq? form) (= 'require (first form)))]  ; the libraries' names first
      (eval form))
    (let [wanted (distinct (remove #(or (namespace %) (resolve %) (special-symbol? %)) (mapcat symbols-of forms)))
          reply (ask (cons 'names wanted))]
      (when (and (seq? reply) (= 'defined (first reply)))
        (doseq [entry (rest reply) :when (and (seq? entry) (some #{(first entry)} wanted))]
          (cond (= '(function) (rest entry)) (intern 'user (first entry) (stub (first entry)))
                (= 'value (second entry)) (intern 'user (first entry) (nth entry 2 nil))))))
    (doseq [form forms]
      (eval form)))
  (.write said (.getBytes "done"))
  (.flush said))
(shutdown-agents)
