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
  (match reply
    [(list 'value value) value]
    [(list 'void) (void)]
    [(list 'error message) (error 'judge "in the program: ~a" message)]
    [_ (error 'judge "the program answered what is not a reply")]))

(define (symbols-of datum)
  (cond [(symbol? datum) (list datum)]
        [(pair? datum) (append (symbols-of (car datum)) (symbols-of (cdr datum)))]
        [(vector? datum) (append-map symbols-of (vector->list datum))]
        [else '()]))

(define tests-namespace (make-base-empty-namespace))
(parameterize ([current-namespace tests-namespace]) (namespace-require 'racket))
(define (bound? name)
  (define none (gensym))
  (with-handlers ([exn:fail:syntax? (lambda (e) #t)])
    (not (eq? none (namespace-variable-value name #t (lambda () none) tests-namespace)))))

(define forms
  (let ([port (open-input-string (port->string (current-input-port)))])
    (port-count-lines! port)
    (for/list ([form (in-port (lambda (in) (read-syntax 'tests.rkt in)) port)]) form)))
(parameterize ([current-namespace tests-namespace])
  (define (require-form? form) (let ([datum (syntax->datum form)]) (and (pair? datum) (eq? (car datum) 'require))))
  (for-each eval (filter require-form? forms))  ; the libraries' names first: the program may not stand in for them
  (define wanted (remove-duplicates (filter (lambda (name) (not (bound? name))) (append-map (compose symbols-of syntax->datum) forms))))
  (match (ask (cons 'names wanted))
    [(list 'defined entries ...)
     (for ([entry (in-list entries)])
       (match entry
         [(list (? (lambda (name) (memq name wanted)) name) 'function) (namespace-set-variable-value! name (stub name) #t)]
         [(list (? (lambda (name) (memq name wanted)) name) 'value value) (namespace-set-variable-value! name value #t)]
         [_ (void)]))]
    [_ (void)])
  (for ([form (in-list forms)])
    (eval form)))
(write-string "done" said)
(flush-output said)
