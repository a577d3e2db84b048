;; Messages between a program suite's tests and the program (racket/base alone: the `racket` library is what the
;; program and the tests load, not these scripts), each in a process of its own (sandbox/runner.py
;; run_suite_apart): its length (8 bytes, little-endian), then the value as `write` prints it, read back with every
;; reader extension off (no #reader, #lang, compiled code or graphs). Plain data only: numbers, booleans, chars,
;; strings, byte strings, symbols, and pairs, vectors and hashes of them. Synchronous: a test's call waits for its reply.
(define message-limit (arithmetic-shift 1 30))

(define (plain? value [depth 0])
  (and (< depth 1000)
       (or (number? value) (boolean? value) (char? value) (string? value) (bytes? value) (symbol? value) (null? value)
           (and (pair? value) (plain? (car value) (add1 depth)) (plain? (cdr value) (add1 depth)))
           (and (vector? value) (for/and ([item (in-vector value)]) (plain? item (add1 depth))))
           (and (hash? value)
                (for/and ([(key item) (in-hash value)]) (and (plain? key (add1 depth)) (plain? item (add1 depth))))))))

(define (send-message out value)
  (define body (let ([buffer (open-output-bytes)]) (write value buffer) (get-output-bytes buffer)))
  (write-bytes (integer->integer-bytes (bytes-length body) 8 #f #f) out)
  (write-bytes body out)
  (flush-output out))

(define (read-exactly in size)
  (define data (read-bytes size in))
  (and (bytes? data) (= (bytes-length data) size) data))

;; The next message in a box, or #f when the other side closed its end (or sent something cut, too big or unreadable).
(define (receive in)
  (define head (read-exactly in 8))
  (define size (and head (integer-bytes->integer head #f #f)))
  (define body (and size (<= size message-limit) (if (zero? size) #"" (read-exactly in size))))
  (and body
       (with-handlers ([exn:fail? (lambda (e) #f)])
         (parameterize ([read-accept-reader #f] [read-accept-lang #f] [read-accept-compiled #f]
                        [read-accept-graph #f] [read-accept-box #f])
           (define port (open-input-bytes body))
           (define value (read port))
           (and (eof-object? (read port)) (plain? value) (box value))))))
