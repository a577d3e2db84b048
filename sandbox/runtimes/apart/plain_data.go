// Go values as plain data between a program suite's tests and the program, each in a binary of its own
// (sandbox/languages/go_apart.py, which puts this text after a package clause and these imports: bytes,
// encoding/binary, errors, fmt, io, math, os, reflect). Both sides are generated from the prompt's signature, so
// both know every type; the bytes carry values only: booleans, integers, floats, strings, and slices, arrays and
// maps of them. What the tests' side reads is checked whole (counts within the message, booleans 0 or 1, integers
// within their type, no duplicate keys, nothing left over): a reply that is not the declared type's value fails the
// test. Messages on a pipe: a 4-byte length, then the bytes.

var judgeMalformed = errors.New("the program's reply is not a value of the declared type")

func judgeWrite(out *bytes.Buffer, v reflect.Value) {
	word := func(x uint64) { _ = binary.Write(out, binary.LittleEndian, x) }
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			out.WriteByte(1)
		} else {
			out.WriteByte(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		word(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		word(v.Uint())
	case reflect.Float32, reflect.Float64:
		word(math.Float64bits(v.Float()))
	case reflect.String:
		_ = binary.Write(out, binary.LittleEndian, uint32(v.Len()))
		out.WriteString(v.String())
	case reflect.Slice, reflect.Map:
		if v.IsNil() {
			out.WriteByte(0)
			return
		}
		out.WriteByte(1)
		_ = binary.Write(out, binary.LittleEndian, uint32(v.Len()))
		if v.Kind() == reflect.Map {
			for it := v.MapRange(); it.Next(); {
				judgeWrite(out, it.Key())
				judgeWrite(out, it.Value())
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			judgeWrite(out, v.Index(i))
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			judgeWrite(out, v.Index(i))
		}
	default:
		panic("not plain data: " + v.Type().String())
	}
}

func judgeCount(in *bytes.Reader) (int, error) {
	var n uint32
	if err := binary.Read(in, binary.LittleEndian, &n); err != nil || int64(n) > int64(in.Len()) {
		return 0, judgeMalformed // each element takes a byte at least
	}
	return int(n), nil
}

func judgeRead(in *bytes.Reader, t reflect.Type) (reflect.Value, error) {
	v := reflect.New(t).Elem()
	var word uint64
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr, reflect.Float32, reflect.Float64:
		if err := binary.Read(in, binary.LittleEndian, &word); err != nil {
			return v, judgeMalformed
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		b, err := in.ReadByte()
		if err != nil || b > 1 {
			return v, judgeMalformed
		}
		v.SetBool(b == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.SetInt(int64(word)); v.Int() != int64(word) {
			return v, judgeMalformed
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if v.SetUint(word); v.Uint() != word {
			return v, judgeMalformed
		}
	case reflect.Float32, reflect.Float64:
		v.SetFloat(math.Float64frombits(word))
	case reflect.String:
		n, err := judgeCount(in)
		if err != nil {
			return v, err
		}
		text := make([]byte, n)
		_, _ = io.ReadFull(in, text)
		v.SetString(string(text))
	case reflect.Slice, reflect.Map:
		present, err := in.ReadByte()
		if err != nil || present > 1 {
			return v, judgeMalformed
		}
		if present == 0 {
			return v, nil
		}
		n, err := judgeCount(in)
		if err != nil {
			return v, err
		}
		if t.Kind() == reflect.Slice {
			v.Set(reflect.MakeSlice(t, n, n))
			for i := 0; i < n; i++ {
				item, err := judgeRead(in, t.Elem())
				if err != nil {
					return v, err
				}
				v.Index(i).Set(item)
			}
			return v, nil
		}
		v.Set(reflect.MakeMapWithSize(t, n))
		for i := 0; i < n; i++ {
			key, err := judgeRead(in, t.Key())
			if err != nil {
				return v, err
			}
			value, err := judgeRead(in, t.Elem())
			if err != nil {
				return v, err
			}
			if v.MapIndex(key).IsValid() {
				return v, judgeMalformed
			}
			v.SetMapIndex(key, value)
		}
	case reflect.Array:
		for i := 0; i < t.Len(); i++ {
			item, err := judgeRead(in, t.Elem())
			if err != nil {
				return v, err
			}
			v.Index(i).Set(item)
		}
	default:
		panic("not plain data: " + t.String())
	}
	return v, nil
}

func judgeSend(to *os.File, message []byte) error {
	if err := binary.Write(to, binary.LittleEndian, uint32(len(message))); err != nil {
		return err
	}
	_, err := to.Write(message)
	return err
}

// judgeReceive is the next message, or an error at the end of the pipe (the other side is gone).
func judgeReceive(from *os.File) ([]byte, error) {
	var n uint32
	if err := binary.Read(from, binary.LittleEndian, &n); err != nil {
		return nil, err
	}
	message := make([]byte, n)
	_, err := io.ReadFull(from, message)
	return message, err
}

// judgeChangesInPlace: an argument of this kind may come back changed (a slice's elements, a map).
func judgeChangesInPlace(v reflect.Value) bool {
	return v.Kind() == reflect.Slice || v.Kind() == reflect.Map
}

// --- the program's side: its server ---------------------------------------------------------------------------

// judgeTake reads the request's arguments into `into` (pointers to them, in order): all of it, nothing more.
func judgeTake(in *bytes.Reader, into ...interface{}) error {
	for _, pointer := range into {
		target := reflect.ValueOf(pointer).Elem()
		value, err := judgeRead(in, target.Type())
		if err != nil {
			return err
		}
		target.Set(value)
	}
	if in.Len() != 0 {
		return errors.New("the tests sent more than the declared arguments")
	}
	return nil
}

// judgeGive appends the results, then the arguments the tests may see changed in place.
func judgeGive(out *bytes.Buffer, values ...interface{}) {
	for _, value := range values {
		judgeWrite(out, reflect.ValueOf(value))
	}
}

// judgeServe answers each request on fd 3 on fd 4, by `answer`, until the tests are done; what the program panics
// with goes to the tests, which panic with it.
func judgeServe(answer func(in *bytes.Reader, out *bytes.Buffer) error) {
	requests, replies := os.NewFile(3, "requests"), os.NewFile(4, "replies")
	for {
		request, err := judgeReceive(requests)
		if err != nil {
			return
		}
		reply := judgeAnswer(answer, request)
		os.Stdout.Sync()
		if judgeSend(replies, reply) != nil {
			return
		}
	}
}

func judgeAnswer(answer func(in *bytes.Reader, out *bytes.Buffer) error, request []byte) (reply []byte) {
	out := bytes.NewBuffer([]byte{0})
	defer func() {
		if thrown := recover(); thrown != nil {
			failed := bytes.NewBuffer([]byte{1})
			judgeWrite(failed, reflect.ValueOf(fmt.Sprint(thrown)))
			reply = failed.Bytes()
		}
	}()
	if err := answer(bytes.NewReader(request), out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return out.Bytes()
}

// --- the tests' side -------------------------------------------------------------------------------------------

var judgeRequests, judgeReplies = os.NewFile(4, "requests"), os.NewFile(3, "replies")

func judgeRefuse(why string) {
	os.Stdout.Sync()
	fmt.Fprintln(os.Stderr, why)
	os.Exit(1)
}

// judgeAsk is the program's answer to a call of the entry point with `arguments` (the stub in the tests' own
// package): its results put where `results` point, the slices and maps it changed copied back into the arguments.
func judgeAsk(results []interface{}, arguments ...interface{}) {
	request := new(bytes.Buffer)
	for _, argument := range arguments {
		judgeWrite(request, reflect.ValueOf(argument))
	}
	if judgeSend(judgeRequests, request.Bytes()) != nil {
		judgeRefuse("the program ended before its tests did")
	}
	reply, err := judgeReceive(judgeReplies)
	if err != nil || len(reply) == 0 {
		judgeRefuse("the program ended before its tests did")
	}
	in := bytes.NewReader(reply[1:])
	if reply[0] == 1 {
		thrown, err := judgeRead(in, reflect.TypeOf(""))
		if err != nil {
			judgeRefuse(err.Error())
		}
		panic("the program panicked: " + thrown.String())
	}
	if reply[0] != 0 {
		judgeRefuse(judgeMalformed.Error())
	}
	for _, pointer := range results {
		target := reflect.ValueOf(pointer).Elem()
		value, err := judgeRead(in, target.Type())
		if err != nil {
			judgeRefuse(err.Error())
		}
		target.Set(value)
	}
	for _, argument := range arguments {
		original := reflect.ValueOf(argument)
		if !judgeChangesInPlace(original) {
			continue
		}
		changed, err := judgeRead(in, original.Type())
		if err != nil {
			judgeRefuse(err.Error())
		}
		judgeCopyBack(original, changed)
	}
	if in.Len() != 0 {
		judgeRefuse(judgeMalformed.Error())
	}
}

func judgeCopyBack(original, changed reflect.Value) {
	if original.Kind() == reflect.Slice {
		reflect.Copy(original, changed)
		return
	}
	if original.IsNil() {
		return
	}
	for _, key := range original.MapKeys() {
		original.SetMapIndex(key, reflect.Value{})
	}
	for it := changed.MapRange(); it.Next(); {
		original.SetMapIndex(it.Key(), it.Value())
	}
}

// judgeDone says on fd 5 that the tests all ran and passed (the tests' TestMain, after m.Run).
func judgeDone() {
	said := os.NewFile(5, "said")
	_, _ = said.Write([]byte("done"))
	_ = said.Close()
}
