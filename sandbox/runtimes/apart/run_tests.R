# The tests' process of an R program suite run apart from the program (sandbox/runner.py run_suite_apart; after
# plain_data.R). It reads the tests' code on stdin and runs it; the functions the tests name that R does not define
# are the program's: asked for on fd 4, answered on fd 3, called there. So is the one they test, `candidate <- f`
# (MultiPL-E's), even where R has one of that name (`median`, `unique`): the program stands in for nothing else of
# R's (`stopifnot`, `isTRUE`). fd 5 hears that the tests all ran.
local({
  replies <- file("/dev/fd/3", "rb", raw = TRUE)
  requests <- file("/dev/fd/4", "wb", raw = TRUE)
  ask <- function(request) {
    judge_plain$send(requests, request)
    reply <- judge_plain$receive(replies)
    if (!is.list(reply)) stop("the program ended before its tests did", call. = FALSE)
    reply
  }
  stub <- function(name) {
    force(name)
    function(...) {
      reply <- ask(list(call = name, args = list(...)))
      if (!is.null(reply$error)) stop("in the program: ", paste(reply$error, collapse = " "), call. = FALSE)
      reply$value
    }
  }
  code <- paste(readLines(file("stdin"), warn = FALSE, encoding = "UTF-8"), collapse = "\n")
  tests <- parse(text = code, keep.source = FALSE)
  assigned <- regmatches(code, gregexpr("\\bcandidate\\s*(<-|=)\\s*[A-Za-z._][A-Za-z0-9._]*", code))[[1]]
  tested <- sub(".*(<-|=)\\s*", "", assigned)
  wanted <- Filter(function(name) !exists(name, envir = globalenv()) || name %in% tested, unique(all.names(tests)))
  defined <- unlist(ask(list(names = as.character(wanted)))$defined)
  for (name in intersect(as.character(defined), wanted)) assign(name, stub(name), envir = globalenv())
  for (test in tests) eval(test, envir = globalenv())
  said <- file("/dev/fd/5", "wb", raw = TRUE)
  writeBin(charToRaw("done"), said)
  close(said)
})
