;; The tests' process of a Racket program suite run apart from the program (sandbox/runner.py run_suite_apart; after
;; plain_data.rkt). It reads the tests' forms on stdin and evaluates them in a `racket` namespace of its own; the names
;; they use that neither they nor Racket bind are the program's: asked for on fd 4, answered on fd 3, its functions
;; called there. fd 5 hears that the tests all ran (rackunit says a failed check on stderr, which fails the run).
(define replies (open-input-file "/dev/fd/3"))
(define requests (open-output-file "/dev/fd/4" #:exists 'append))
(define said (open-output-file "/dev/fd/5" #:exists 'append))

(define (ask request)
  (send-message requests request)
  (define reply (receive replies))
  (unless reply (error 'judge "the program ended before its tests did"))
  (unbox reply))

(define ((stub name) . args)
  (define reply (ask (list* 'call name args)))
  (cond [(and (list? reply) (= (length reply) 2) (eq? (car reply) 'value)) (cadr reply)]
        [(equal? reply '(void)) (void)]
        [(and (list? reply) (= (length reply) 2) (eq? (car reply) 'error)) (error 'judge "in the program: ~a" (cadr reply))]
        [else (error 'judge "the program answered what is not a reply")]))

(define (symbols-of datum)
  (cond [(symbol? datum) (list datum)]
        [(pair? datum) (append (symbols-of (car datum)) (symbols-of (cdr datum)))]
        [(vector? datum) (apply append (map symbols-of (vector->list datum)))]
        [else '()]))

;; `racket` and rackunit, as tests appended to a `#lang racket` program that required rackunit found them.
(define tests-namespace (make-base-empty-namespace))
(parameterize ([current-namespace tests-namespace]) (namespace-require 'racket) (namespace-require 'rackunit))
(define (bound? name)
  (define none (gensym))
  (with-handlers ([exn:fail:syntax? (lambda (e) #t)])
    (not (eq? none (namespace-variable-value name #t (lambda () none) tests-namespace)))))

(define (read-all in)
  (define text (open-output-string))
  (let copy () (define chunk (read-string 65536 in)) (unless (eof-object? chunk) (write-string chunk text) (copy)))
  (get-output-string text))

(define forms
  (let ([port (open-input-string (read-all (current-input-port)))])
    (port-count-lines! port)
    (for/list ([form (in-port (lambda (in) (read-syntax 'tests.rkt in)) port)]) form)))

;; Stand-ins for the names the program answers for, among those `wanted` (an entry is (name function) or
;; (name value v)).
(define (define-program-names! wanted entries)
  (for ([entry (in-list entries)])
    (when (and (list? entry) (pair? entry) (memq (car entry) wanted))
      (cond [(equal? (cdr entry) '(function)) (namespace-set-variable-value! (car entry) (stub (car entry)) #t)]
            [(and (= (length entry) 3) (eq? (cadr entry) 'value))
             (namespace-set-variable-value! (car entry) (caddr entry) #t)]))))

(parameterize ([current-namespace tests-namespace])
  (define (require-form? form) (let ([datum (syntax->datum form)]) (and (pair? datum) (eq? (car datum) 'require))))
  (for-each eval (filter require-form? forms))  ; the libraries' names first: the program may not stand in for them
  (define seen (make-hasheq))
  (define wanted
    (for*/list ([form (in-list forms)] [name (in-list (symbols-of (syntax->datum form)))]
                #:unless (hash-ref seen name #f) #:unless (bound? name))
      (hash-set! seen name #t)
      name))
  (define reply (ask (cons 'names wanted)))
  (when (and (list? reply) (pair? reply) (eq? (car reply) 'defined))
    (define-program-names! wanted (cdr reply)))
  (for ([form (in-list forms)])
    (eval form)))
(write-string "done" said)
(flush-output said)
