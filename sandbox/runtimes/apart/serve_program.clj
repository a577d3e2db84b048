;; The program's process of a Clojure program suite run apart from its tests (sandbox/runner.py run_suite_apart; after
;; plain_data.clj): the program (the judge.program property) is loaded in `user`, then answers the tests' requests on
;; fd 3 with replies on fd 4 until the tests' process is done, calling the functions it defined there. What they
;; return or throw goes back as plain data.
(ns judge.serve-program)
(alias 'plain 'judge.plain-data)  ; defined above, not a library on the class path

(defn- program-var [name]
  (when (symbol? name) (get (ns-interns 'user) name)))

(defn- answer [request]
  (cond
    (and (seq? request) (= 'names (first request)))
    (cons 'defined
          (for [name (rest request) :let [v (program-var name)] :when v]
            (if (fn? @v) (list name 'function) (list name 'value @v))))

    (and (seq? request) (= 'call (first request)))
    (try
      (let [v (program-var (second request))]
        (when-not (and v (fn? @v)) (throw (IllegalArgumentException. (str "the program has no function " (second request)))))
        (let [value (apply @v (drop 2 request))]
          (if (plain/plain? value)
            (list 'value value)
            (list 'error "the program answered with what is not plain data" "IllegalArgumentException"))))
      (catch Throwable thrown
        (list 'error (str (.getMessage thrown)) (.getSimpleName (class thrown)))))

    :else (list 'error "a request that is not one" "IllegalArgumentException")))

(binding [*ns* (create-ns 'user)]
  (refer-clojure)
  (load-file (System/getProperty "judge.program")))
(let [requests (plain/open-in 3) replies (plain/open-out 4)]
  (loop []
    (when-let [[request] (plain/receive requests)]
      (let [reply (answer request)]
        (plain/send-message replies (if (plain/plain? reply) reply (list 'error "not plain data" "IllegalArgumentException"))))
      (recur))))
(shutdown-agents)
