# Messages between a program suite's tests and the program, each in an R of its own (sandbox/runner.py
# run_suite_apart): its length (4 bytes, little-endian), then the value in a small binary form read without
# unserialize (which would rebuild the program's closures and environments): a tag, then NULL (N), a logical (L),
# integer (I), double (D) or character (C) vector, or a list (V): its length, its elements, then its names and its
# dim, each when it has one. Other attributes are not plain data: an object of a class of the program's, whose
# methods would answer `==` or all.equal, cannot be sent. Synchronous: a test's call waits for its reply.
judge_plain <- local({
  write_int <- function(con, x) writeBin(as.integer(x), con, size = 4L, endian = "little")

  write_value <- function(con, value, depth = 0L) {
    if (depth > 1000L) stop("nested too deep", call. = FALSE)
    extra <- setdiff(names(attributes(value)), c("names", "dim"))
    if (length(extra)) stop("a value with attributes ", paste(extra, collapse = ", "), " is not plain data", call. = FALSE)
    tag <- switch(typeof(value), NULL = "N", logical = "L", integer = "I", double = "D", character = "C", list = "V",
                  stop("a ", typeof(value), " is not plain data", call. = FALSE))
    writeBin(charToRaw(tag), con)
    if (tag == "N") return(invisible())
    write_int(con, length(value))
    switch(tag,
      L = , I = write_int(con, value),
      D = writeBin(as.double(value), con, size = 8L, endian = "little"),
      C = for (text in value) write_string(con, text),
      V = for (item in value) write_value(con, item, depth + 1L))
    for (attribute in list(names(value), dim(value))) {
      write_int(con, !is.null(attribute))
      if (!is.null(attribute)) write_value(con, attribute, depth + 1L)
    }
  }

  write_string <- function(con, text) {
    if (is.na(text)) return(write_int(con, -1L))
    bytes <- charToRaw(enc2utf8(text))
    write_int(con, length(bytes))
    writeBin(bytes, con)
  }

  encoded <- function(value) {
    con <- rawConnection(raw(0), "wb")
    on.exit(close(con))
    write_value(con, value)
    rawConnectionValue(con)
  }

  malformed <- function() stop("the program's reply is not plain data", call. = FALSE)

  # A reader of `bytes` that checks each read is within them.
  reader <- function(bytes) {
    at <- 1L
    take <- function(n) {
      if (n < 0L || at + n - 1L > length(bytes)) malformed()
      taken <- bytes[seq_len(n) + at - 1L]
      at <<- at + n
      taken
    }
    int <- function(n = 1L) readBin(take(4L * n), "integer", n, size = 4L, endian = "little")
    count <- function() {
      n <- int()
      if (is.na(n) || n < 0L || n > length(bytes) - at + 1L) malformed()  # each element takes a byte at least
      n
    }
    value <- function(depth = 0L) {
      if (depth > 1000L) malformed()
      tag <- rawToChar(take(1L))
      if (tag == "N") return(NULL)
      n <- count()
      result <- switch(tag,
        L = {
          bits <- int(n)
          if (!all(is.na(bits) | bits %in% c(0L, 1L))) malformed()
          as.logical(bits)
        },
        I = int(n),
        D = readBin(take(8L * n), "double", n, size = 8L, endian = "little"),
        C = vapply(seq_len(n), function(i) string(), ""),
        V = lapply(seq_len(n), function(i) value(depth + 1L)),
        malformed())
      has_names <- int()
      if (identical(has_names, 1L)) {
        names(result) <- value(depth + 1L)
      } else if (!identical(has_names, 0L)) malformed()
      has_dim <- int()
      if (identical(has_dim, 1L)) {
        dim(result) <- value(depth + 1L)
      } else if (!identical(has_dim, 0L)) malformed()
      result
    }
    string <- function() {
      n <- int()
      if (identical(n, -1L)) return(NA_character_)
      raw_text <- take(if (is.na(n) || n < 0L) malformed() else n)
      if (any(raw_text == as.raw(0L))) malformed()
      text <- rawToChar(raw_text)
      if (!validUTF8(text)) malformed()
      Encoding(text) <- "UTF-8"
      text
    }
    list(value = value, done = function() at > length(bytes))
  }

  decoded <- function(bytes) {
    read <- reader(bytes)
    result <- tryCatch(read$value(), error = function(e) malformed())
    if (!read$done()) malformed()
    result
  }

  send <- function(con, value) {
    body <- encoded(value)
    writeBin(length(body), con, size = 4L, endian = "little")
    writeBin(body, con)
    flush(con)
  }

  # The next message, or NULL when the other side closed its end.
  receive <- function(con) {
    size <- readBin(con, "integer", 1L, size = 4L, endian = "little")
    if (length(size) == 0L || is.na(size) || size < 0L) return(NULL)
    body <- raw(0)
    while (length(body) < size) {
      more <- readBin(con, "raw", size - length(body))
      if (length(more) == 0L) return(NULL)
      body <- c(body, more)
    }
    decoded(body)
  }

  list(send = send, receive = receive)
})
