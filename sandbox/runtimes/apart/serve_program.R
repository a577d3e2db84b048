# The program's process of an R program suite run apart from its tests (sandbox/runner.py run_suite_apart; after
# plain_data.R): the program runs as the main script, then answers the tests' requests on fd 3 with replies on fd 4
# until the tests' process is done. Its functions are called here; what they return or stop with goes back as plain
# data.
local({
  program <- commandArgs(trailingOnly = TRUE)[1]
  before <- ls(globalenv(), all.names = TRUE)
  source(program, local = globalenv())
  own <- function(name) {
    is.character(name) && length(name) == 1L && !(name %in% before) &&
      exists(name, envir = globalenv(), inherits = FALSE) && is.function(get(name, envir = globalenv()))
  }
  # list(names): which of them are the program's functions; list(call, args): one called.
  answer <- function(request) {
    if (!is.null(request$names)) return(list(defined = Filter(own, as.list(request$names))))
    if (!own(request$call)) return(list(error = paste("the program has no function", request$call)))
    tryCatch(
      list(value = do.call(get(request$call, envir = globalenv()), as.list(request$args))),
      error = function(e) list(error = conditionMessage(e))
    )
  }
  requests <- file("/dev/fd/3", "rb", raw = TRUE)
  replies <- file("/dev/fd/4", "wb", raw = TRUE)
  while (!is.null(request <- judge_plain$receive(requests))) {
    reply <- answer(request)
    flush(stdout())
    tryCatch(judge_plain$send(replies, reply), error = function(e) {
      judge_plain$send(replies, list(error = paste("the program answered with what is not plain data:",
                                                   conditionMessage(e))))
    })
  }
})
