package judge

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream, EOFException}
import java.io.{FileInputStream, FileOutputStream, IOException}
import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}

/** Scala values as plain data between a program suite's tests and the program, each in a JVM of its own
  * (sandbox/languages/scala_apart.py): the program's server and the tests' stub are generated from the prompt's
  * signature, each type a codec built of the ones below (`Plain.list(Plain.long)`), so both sides know every type;
  * the bytes carry values only. What the tests' side reads is checked whole (counts within the message, booleans 0
  * or 1, strings valid UTF-8, no duplicate keys, nothing left over): a reply that is not the declared type's value
  * fails the test. Messages on a pipe: a 4-byte length, then the bytes. Built once as a jar both JVMs load
  * (`make languages`).
  */
object Plain {
  final class Malformed extends IOException("the program's reply is not a value of the declared type")

  final class Codec[T](val write: (DataOutputStream, T) => Unit, val read: DataInputStream => T)

  private def count(in: DataInputStream): Int = {
    val n = in.readInt()
    if (n < 0 || n > in.available()) throw new Malformed // each element takes a byte at least
    n
  }

  // --- values -------------------------------------------------------------------------------------------------------

  val long = new Codec[Long](_.writeLong(_), _.readLong())
  val int = new Codec[Int](_.writeInt(_), _.readInt())
  val short = new Codec[Short]((out, x) => out.writeShort(x), _.readShort())
  val byte = new Codec[Byte]((out, x) => out.writeByte(x), _.readByte())
  val double = new Codec[Double](_.writeDouble(_), _.readDouble())
  val float = new Codec[Float](_.writeFloat(_), _.readFloat())
  val char = new Codec[Char]((out, x) => out.writeChar(x), _.readChar())
  val unit = new Codec[Unit]((_, _) => (), _ => ())
  val boolean = new Codec[Boolean](
    _.writeBoolean(_),
    in => in.readUnsignedByte() match {
      case 0 => false
      case 1 => true
      case _ => throw new Malformed
    })
  val string = new Codec[String](
    (out, text) => {
      if (text == null) throw new IllegalArgumentException("a String of null is not plain data")
      val bytes = text.getBytes(StandardCharsets.UTF_8)
      out.writeInt(bytes.length)
      out.write(bytes)
    },
    in => {
      val bytes = new Array[Byte](count(in))
      in.readFully(bytes)
      try StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
        .decode(ByteBuffer.wrap(bytes)).toString
      catch { case _: CharacterCodingException => throw new Malformed }
    })

  def list[T](item: Codec[T]): Codec[List[T]] = new Codec[List[T]](
    (out, items) => { out.writeInt(items.size); items.foreach(item.write(out, _)) },
    in => List.fill(count(in))(item.read(in)))

  /** A map of the type the prompt names (`make`: its companion's apply, as the prompt's imports resolve `Map`). */
  def map[K, V, M <: scala.collection.Map[K, V]](key: Codec[K], value: Codec[V], make: Seq[(K, V)] => M): Codec[M] =
    new Codec[M](
      (out, map) => {
        out.writeInt(map.size)
        map.foreach { case (k, v) => key.write(out, k); value.write(out, v) }
      },
      in => {
        val pairs = List.fill(count(in))((key.read(in), value.read(in)))
        if (pairs.map(_._1).distinct.size != pairs.size) throw new Malformed
        make(pairs)
      })

  def option[T](item: Codec[T]): Codec[Option[T]] = new Codec[Option[T]](
    (out, option) => { out.writeBoolean(option.isDefined); option.foreach(item.write(out, _)) },
    in => if (boolean.read(in)) Some(item.read(in)) else None)

  def either[A, B](left: Codec[A], right: Codec[B]): Codec[Either[A, B]] = new Codec[Either[A, B]](
    (out, either) => either match {
      case Left(a) => out.writeBoolean(false); left.write(out, a)
      case Right(b) => out.writeBoolean(true); right.write(out, b)
    },
    in => if (boolean.read(in)) Right(right.read(in)) else Left(left.read(in)))

  def tuple2[A, B](a: Codec[A], b: Codec[B]): Codec[(A, B)] = new Codec[(A, B)](
    (out, t) => { a.write(out, t._1); b.write(out, t._2) },
    in => { val first = a.read(in); (first, b.read(in)) })

  def tuple3[A, B, C](a: Codec[A], b: Codec[B], c: Codec[C]): Codec[(A, B, C)] = new Codec[(A, B, C)](
    (out, t) => { a.write(out, t._1); b.write(out, t._2); c.write(out, t._3) },
    in => { val first = a.read(in); val second = b.read(in); (first, second, c.read(in)) })

  def tuple4[A, B, C, D](a: Codec[A], b: Codec[B], c: Codec[C], d: Codec[D]): Codec[(A, B, C, D)] =
    new Codec[(A, B, C, D)](
      (out, t) => { a.write(out, t._1); b.write(out, t._2); c.write(out, t._3); d.write(out, t._4) },
      in => { val first = a.read(in); val second = b.read(in); val third = c.read(in); (first, second, third, d.read(in)) })

  // --- messages -----------------------------------------------------------------------------------------------------

  private def send(out: FileOutputStream, bytes: Array[Byte]): Unit = {
    out.write(ByteBuffer.allocate(4).putInt(bytes.length).array())
    out.write(bytes)
    out.flush()
  }

  /** The next message, or null at the end of the pipe (the other side is gone). */
  private def receive(in: DataInputStream): Array[Byte] =
    try {
      val bytes = new Array[Byte](in.readInt())
      in.readFully(bytes)
      bytes
    } catch { case _: EOFException => null }

  private def opened(fd: Int) = new FileOutputStream("/dev/fd/" + fd, true)

  // --- the program's side: its server -------------------------------------------------------------------------------

  /** One request: its arguments read in order, then the reply with the result and the maps changed in place. */
  final class Call private[Plain] (request: Array[Byte]) {
    private val in = new DataInputStream(new ByteArrayInputStream(request))
    private[Plain] val bytes = new ByteArrayOutputStream()
    private val out = new DataOutputStream(bytes)
    out.writeByte(0)

    def next[T](codec: Codec[T]): T = codec.read(in)

    /** All the arguments were read: the request held nothing more. */
    def done(): Unit = if (in.available() != 0) throw new IOException("the tests sent more than the declared arguments")

    /** The result, of its codec. */
    def returned[T](codec: Codec[T], result: T): Call = { codec.write(out, result); out.flush(); this }

    /** An argument the tests may see changed in place (a map), after the result. */
    def changed[T](codec: Codec[T], argument: T): Call = returned(codec, argument)
  }

  /** The program's answers: one call of `answer` per request on fd 3, its reply on fd 4, until the tests are done. */
  def serve(answer: Call => Call): Unit = {
    val requests = new DataInputStream(new FileInputStream("/dev/fd/3"))
    val replies = opened(4)
    var request = receive(requests)
    while (request != null) {
      val reply =
        try answer(new Call(request)).bytes.toByteArray
        catch {
          case thrown: Throwable => // the program's: the tests see it thrown
            val bytes = new ByteArrayOutputStream()
            val out = new DataOutputStream(bytes)
            out.writeByte(1)
            string.write(out, thrown.toString)
            bytes.toByteArray
        }
      Console.out.flush()
      send(replies, reply)
      request = receive(requests)
    }
    Console.out.flush()
  }

  // --- the tests' side ----------------------------------------------------------------------------------------------

  /** An argument of a call, of its codec; `copiedBack`: the program may change it in place (a mutable map). */
  final case class Arg[T](codec: Codec[T], value: T, copiedBack: Boolean = false)

  private lazy val requests = opened(4)
  private lazy val replies = new DataInputStream(new FileInputStream("/dev/fd/3"))

  private def put[T](out: DataOutputStream, arg: Arg[T]): Unit = arg.codec.write(out, arg.value)

  private def copyBack[T](in: DataInputStream, arg: Arg[T]): Unit = (arg.value, arg.codec.read(in)) match {
    case (original: scala.collection.mutable.Map[Any, Any] @unchecked, changed: scala.collection.Map[_, _]) =>
      if (original != changed) { original.clear(); original ++= changed }
    case _ =>
  }

  /** The program's answer to a call of the entry point (the stub in the tests' own object): what it returned, with
    * the maps it changed copied back into the arguments; what it threw is thrown as a RuntimeException.
    */
  def ask[R](returns: Codec[R], args: Arg[_]*): R =
    try {
      val bytes = new ByteArrayOutputStream()
      val out = new DataOutputStream(bytes)
      args.foreach(put(out, _))
      out.flush()
      send(requests, bytes.toByteArray)
      val reply = receive(replies)
      if (reply == null || reply.isEmpty) refuse("the program ended before its tests did")
      val in = new DataInputStream(new ByteArrayInputStream(reply, 1, reply.length - 1))
      if (reply(0) == 1) throw new RuntimeException("the program threw: " + string.read(in))
      if (reply(0) != 0) throw new Malformed
      val result = returns.read(in)
      args.filter(_.copiedBack).foreach(copyBack(in, _))
      if (in.available() != 0) throw new Malformed
      result
    } catch {
      case e: IOException => refuse(e.getMessage)
    }

  private def refuse(why: String): Nothing = {
    Console.out.flush()
    System.err.println(why)
    Runtime.getRuntime.halt(1)
    throw new IllegalStateException(why)
  }

  /** Runs the tests' main, then says on fd 5 that they all ran (what they throw ends the JVM before it). */
  def runTests(tests: () => Unit): Unit = {
    tests()
    Console.out.flush()
    val said = opened(5)
    try said.write("done".getBytes(StandardCharsets.US_ASCII))
    finally said.close()
  }
}
