;; The program's process of a Racket program suite run apart from its tests (sandbox/runner.py run_suite_apart;
;; after plain_data.rkt): the program's module runs, then answers the tests' requests on fd 3 with replies on fd 4
;; until the tests' process is done, finding names among the module's definitions. What its functions return or
;; raise goes back as plain data.
(define program-path
  (simplify-path (path->complete-path (vector-ref (current-command-line-arguments) 0))))
(parameterize ([current-command-line-arguments (vector)])
  (dynamic-require program-path #f))
(define program-namespace (module->namespace program-path))
(define (program-value name)
  (with-handlers ([exn:fail? (lambda (e) #f)])
    (and (symbol? name) (namespace-variable-value name #t (lambda () #f) program-namespace))))

;; (names name ...): which of them the program defines, each a function or a value; (call name arg ...): one called.
(define (answer request)
  (cond
    [(and (list? request) (pair? request) (eq? (car request) 'names))
     (cons 'defined
           (for*/list ([name (in-list (cdr request))] [value (in-value (program-value name))] #:when value)
             (if (procedure? value) (list name 'function) (list name 'value value))))]
    [(and (list? request) (pair? request) (eq? (car request) 'call) (pair? (cdr request)))
     (define function (program-value (cadr request)))
     (with-handlers ([(lambda (e) #t)
                      (lambda (e) (list 'error (if (exn? e) (exn-message e) (format "raised ~s" e))))])
       (unless (procedure? function) (error 'judge "the program has no function ~a" (cadr request)))
       (define value (apply function (cddr request)))
       (cond [(void? value) (list 'void)]
             [(plain? value) (list 'value value)]
             [else (list 'error (format "the program answered with what is not plain data: ~e" value))]))]
    [else (list 'error "a request that is not one")]))

(define requests (open-input-file "/dev/fd/3"))
(define replies (open-output-file "/dev/fd/4" #:exists 'append))
(let serve ()
  (define request (receive requests))
  (when request
    (define reply (answer (unbox request)))
    (send-message replies (if (plain? reply) reply (list 'error "the program answered with what is not plain data")))
    (serve)))
