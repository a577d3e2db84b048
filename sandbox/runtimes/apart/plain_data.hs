-- Haskell values as plain data between a program suite's tests and the program, each in a binary of its own
-- (sandbox/languages/haskell_apart.py puts the imports below at the top of each side's module, the declarations
-- after its code, and writes each declared type as a codec of these: `judgeList judgeFloat`). The bytes carry values
-- only (never `read` of a value, only of an integer's checked digits): what the tests' side reads is checked whole
-- (counts within the message, booleans 0 or 1, characters code points, nothing left over). A reply that is not the
-- declared type's value fails the test. Messages on a pipe: a 4-byte length, then the bytes.
import qualified Control.Exception as JudgeE
import qualified Data.Bits as JudgeBits
import qualified Data.ByteString as JudgeB
import qualified Data.ByteString.Builder as JudgeBuilder
import qualified Data.ByteString.Lazy as JudgeL
import qualified Data.Char as JudgeC
import qualified Data.Word as JudgeW
import qualified GHC.Float as JudgeF
import qualified GHC.IO.Handle.FD as JudgeFD
import qualified System.Exit as JudgeX
import qualified System.IO as JudgeIO
import qualified System.IO.Unsafe as JudgeU
-- judge: declarations

type JudgeGet a = JudgeB.ByteString -> Maybe (a, JudgeB.ByteString)

data JudgeCodec a = JudgeCodec {judgePut :: a -> JudgeBuilder.Builder, judgeGet :: JudgeGet a}

judgeStrict :: JudgeBuilder.Builder -> JudgeB.ByteString
judgeStrict = JudgeL.toStrict . JudgeBuilder.toLazyByteString

judgeTake :: Int -> JudgeGet JudgeB.ByteString
judgeTake n bytes
  | n < 0 || n > JudgeB.length bytes = Nothing
  | otherwise = Just (JudgeB.splitAt n bytes)

judgeLittleEndian :: JudgeB.ByteString -> JudgeW.Word64
judgeLittleEndian = JudgeB.foldr (\byte rest -> JudgeBits.shiftL rest 8 JudgeBits..|. fromIntegral byte) 0

judgeWord :: Int -> JudgeGet JudgeW.Word64
judgeWord n bytes = fmap (\(taken, rest) -> (judgeLittleEndian taken, rest)) (judgeTake n bytes)

judgeCount :: JudgeGet Int
judgeCount bytes = case judgeWord 4 bytes of
  Just (n, rest) | fromIntegral n <= JudgeB.length rest -> Just (fromIntegral n, rest)
  _ -> Nothing

judgeInt :: JudgeCodec Int
judgeInt = JudgeCodec (JudgeBuilder.int64LE . fromIntegral) get
  where get bytes = fmap (\(word, rest) -> (fromIntegral word, rest)) (judgeWord 8 bytes)

judgeInteger :: JudgeCodec Integer
judgeInteger = JudgeCodec (judgePut judgeString . show) get
  where
    get bytes = case judgeGet judgeString bytes of
      Just (text, rest) | judgeIsInteger text -> Just (read text, rest)
      _ -> Nothing

judgeIsInteger :: String -> Bool
judgeIsInteger ('-' : digits) = judgeIsInteger digits
judgeIsInteger digits = not (null digits) && all JudgeC.isDigit digits

judgeDouble :: JudgeCodec Double
judgeDouble = JudgeCodec (JudgeBuilder.word64LE . JudgeF.castDoubleToWord64) get
  where get bytes = fmap (\(word, rest) -> (JudgeF.castWord64ToDouble word, rest)) (judgeWord 8 bytes)

judgeFloat :: JudgeCodec Float
judgeFloat = JudgeCodec (JudgeBuilder.word32LE . JudgeF.castFloatToWord32) get
  where get bytes = fmap (\(word, rest) -> (JudgeF.castWord32ToFloat (fromIntegral word), rest)) (judgeWord 4 bytes)

judgeBool :: JudgeCodec Bool
judgeBool = JudgeCodec (\x -> JudgeBuilder.word8 (if x then 1 else 0)) get
  where
    get bytes = case JudgeB.uncons bytes of
      Just (0, rest) -> Just (False, rest)
      Just (1, rest) -> Just (True, rest)
      _ -> Nothing

judgeChar :: JudgeCodec Char
judgeChar = JudgeCodec (JudgeBuilder.word32LE . fromIntegral . JudgeC.ord) get
  where
    get bytes = case judgeWord 4 bytes of
      Just (point, rest) | point <= 0x10FFFF -> Just (JudgeC.chr (fromIntegral point), rest)
      _ -> Nothing

judgeString :: JudgeCodec String
judgeString = judgeList judgeChar

judgeUnit :: JudgeCodec ()
judgeUnit = JudgeCodec (const mempty) (\bytes -> Just ((), bytes))

judgeList :: JudgeCodec a -> JudgeCodec [a]
judgeList item = JudgeCodec put get
  where
    put xs = JudgeBuilder.word32LE (fromIntegral (length xs)) <> foldMap (judgePut item) xs
    get bytes = judgeCount bytes >>= uncurry items
    items 0 rest = Just ([], rest)
    items n rest = do
      (x, afterX) <- judgeGet item rest
      (xs, afterXs) <- items (n - 1 :: Int) afterX
      Just (x : xs, afterXs)

judgeMaybe :: JudgeCodec a -> JudgeCodec (Maybe a)
judgeMaybe item = JudgeCodec put get
  where
    put Nothing = JudgeBuilder.word8 0
    put (Just x) = JudgeBuilder.word8 1 <> judgePut item x
    get bytes = case judgeGet judgeBool bytes of
      Just (False, rest) -> Just (Nothing, rest)
      Just (True, rest) -> fmap (\(x, afterX) -> (Just x, afterX)) (judgeGet item rest)
      Nothing -> Nothing

judgeTuple2 :: JudgeCodec a -> JudgeCodec b -> JudgeCodec (a, b)
judgeTuple2 a b = JudgeCodec (\(x, y) -> judgePut a x <> judgePut b y) get
  where
    get bytes = do
      (x, afterX) <- judgeGet a bytes
      (y, afterY) <- judgeGet b afterX
      Just ((x, y), afterY)

judgeTuple3 :: JudgeCodec a -> JudgeCodec b -> JudgeCodec c -> JudgeCodec (a, b, c)
judgeTuple3 a b c = JudgeCodec (\(x, y, z) -> judgePut a x <> judgePut b y <> judgePut c z) get
  where
    get bytes = do
      (x, afterX) <- judgeGet a bytes
      (y, afterY) <- judgeGet b afterX
      (z, afterZ) <- judgeGet c afterY
      Just ((x, y, z), afterZ)

judgeHandle :: Int -> IO JudgeIO.Handle
judgeHandle fd = do
  handle <- JudgeFD.fdToHandle (fromIntegral fd)
  JudgeIO.hSetBinaryMode handle True
  pure handle

judgeSend :: JudgeIO.Handle -> JudgeB.ByteString -> IO ()
judgeSend handle message = do
  JudgeB.hPut handle (judgeStrict (JudgeBuilder.word32LE (fromIntegral (JudgeB.length message))))
  JudgeB.hPut handle message
  JudgeIO.hFlush handle

-- The next message, or Nothing at the end of the pipe (the other side is gone).
judgeReceive :: JudgeIO.Handle -> IO (Maybe JudgeB.ByteString)
judgeReceive handle = do
  header <- JudgeB.hGet handle 4
  if JudgeB.length header < 4
    then pure Nothing
    else do
      let size = fromIntegral (judgeLittleEndian header)
      body <- JudgeB.hGet handle size
      pure (if JudgeB.length body < size then Nothing else Just body)

-- --- the program's side: its server ------------------------------------------------------------------------------

-- Answers each request on fd 3 on fd 4, by `answer` (Nothing: a request it cannot read), until the tests are done;
-- what the program throws goes to the tests, which throw it.
judgeServe :: (JudgeB.ByteString -> Maybe JudgeBuilder.Builder) -> IO ()
judgeServe answer = do
  requests <- judgeHandle 3
  replies <- judgeHandle 4
  let serve = do
        request <- judgeReceive requests
        case fmap answer request of
          Nothing -> pure ()
          Just Nothing -> judgeRefuse "a request that is not the entry point's arguments"
          Just (Just result) -> do
            reply <- JudgeE.tryJust judgeRaisedNotExited (JudgeE.evaluate (judgeStrict (JudgeBuilder.word8 0 <> result)))
            JudgeIO.hFlush JudgeIO.stdout
            judgeSend replies (either judgeRaised id reply)
            serve
  serve

-- What the program threw, unless it is an exit (`exitWith`): that ends the program, as it would have alone.
judgeRaisedNotExited :: JudgeE.SomeException -> Maybe JudgeE.SomeException
judgeRaisedNotExited thrown = case (JudgeE.fromException thrown :: Maybe JudgeX.ExitCode) of
  Just _ -> Nothing
  Nothing -> Just thrown

judgeRaised :: JudgeE.SomeException -> JudgeB.ByteString
judgeRaised thrown = judgeStrict (JudgeBuilder.word8 1 <> judgePut judgeString (show thrown))

-- --- the tests' side ----------------------------------------------------------------------------------------------

{-# NOINLINE judgeChannels #-}
judgeChannels :: (JudgeIO.Handle, JudgeIO.Handle)
judgeChannels = JudgeU.unsafePerformIO ((,) <$> judgeHandle 4 <*> judgeHandle 3)

judgeRefuse :: String -> IO a
judgeRefuse why = do
  JudgeIO.hFlush JudgeIO.stdout
  JudgeIO.hPutStrLn JudgeIO.stderr why
  JudgeX.exitWith (JudgeX.ExitFailure 1)

-- The program's answer to a call of the entry point whose arguments `request` holds: its result, of `returns`.
-- The request is whole before it is sent, so a call in another's arguments has had its answer by then.
{-# NOINLINE judgeAsk #-}
judgeAsk :: JudgeBuilder.Builder -> JudgeCodec r -> r
judgeAsk request returns = JudgeU.unsafePerformIO $ do
  let (requests, replies) = judgeChannels
  judgeSend requests (judgeStrict request)
  reply <- judgeReceive replies
  case fmap JudgeB.uncons reply of
    Nothing -> judgeRefuse "the program ended before its tests did"
    Just (Just (0, rest)) | Just (value, left) <- judgeGet returns rest, JudgeB.null left -> pure value
    Just (Just (1, rest)) | Just (message, left) <- judgeGet judgeString rest, JudgeB.null left ->
      JudgeE.throwIO (JudgeE.ErrorCall ("the program raised: " ++ message))
    _ -> judgeRefuse "the program's reply is not a value of the declared type"

-- Says on fd 5 that the tests all ran (after them).
judgeDone :: IO ()
judgeDone = do
  JudgeIO.hFlush JudgeIO.stdout
  said <- judgeHandle 5
  JudgeB.hPut said (JudgeB.pack [100, 111, 110, 101])
  JudgeIO.hClose said
