// Prints murmur2 reference vectors from the real Java client
// (org.apache.kafka.common.utils.Utils), used by the Rust partitioner tests:
// the constants in producer/src/partitioner.rs were pasted from this output,
// and tests/tests/producer_partitioner_java.rs runs it at test time.
//
// Run (Java 11+ single-file source launch):
//   java -cp "$HOME/.cache/kafka-eos/kafka-4.4.0/libs/*" tests/java/Murmur2Vectors.java
//
// One line per key: <key as lowercase hex, "-" when empty> <TAB> <murmur2>
// <TAB> <partition for n=1>,<n=2>,<n=3>,<n=7>,<n=16>,<n=100>,<n=1000>
// where each partition is Utils.toPositive(Utils.murmur2(key)) % n, checked
// against BuiltInPartitioner.partitionForKey (the default producer's choice).
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.Utils;

public class Murmur2Vectors {
    static final int[] PARTITION_COUNTS = {1, 2, 3, 7, 16, 100, 1000};

    public static void main(String[] args) {
        List<byte[]> keys = new ArrayList<>();
        keys.add(new byte[0]);
        // Every tail length (0..3) twice, with bytes >= 0x80 to exercise the
        // sign handling of Java's (byte & 0xff).
        for (int len = 1; len <= 7; len++) {
            byte[] k = new byte[len];
            for (int i = 0; i < len; i++) {
                k[i] = (byte) (0x41 + i);
            }
            keys.add(k);
            byte[] h = new byte[len];
            for (int i = 0; i < len; i++) {
                h[i] = (byte) (0xff - 0x11 * i);
            }
            keys.add(h);
        }
        keys.add("kafka".getBytes(StandardCharsets.UTF_8));
        keys.add("21".getBytes(StandardCharsets.UTF_8));
        keys.add("foobar".getBytes(StandardCharsets.UTF_8));
        keys.add("a-little-bit-long-string".getBytes(StandardCharsets.UTF_8));
        keys.add("h\u00e9llo w\u00f6rld \u65e5\u672c\u8a9e \uD83E\uDD80".getBytes(StandardCharsets.UTF_8));
        keys.add("\u00fc\u00f1\u00ee\u00e7\u00f8d\u00e9".getBytes(StandardCharsets.UTF_8));
        // 100 random-but-fixed byte strings: java.util.Random's algorithm is
        // specified, so seed 20240607 gives the same bytes on every JVM.
        Random rnd = new Random(20240607L);
        for (int i = 0; i < 100; i++) {
            byte[] k = new byte[rnd.nextInt(65)];
            rnd.nextBytes(k);
            keys.add(k);
        }

        StringBuilder out = new StringBuilder();
        for (byte[] k : keys) {
            int h = Utils.murmur2(k);
            out.append(k.length == 0 ? "-" : hex(k)).append('\t').append(h).append('\t');
            for (int j = 0; j < PARTITION_COUNTS.length; j++) {
                int n = PARTITION_COUNTS[j];
                int p = Utils.toPositive(h) % n;
                int builtIn = BuiltInPartitioner.partitionForKey(k, n);
                if (p != builtIn) {
                    System.err.println("mismatch with BuiltInPartitioner for " + hex(k) + " n=" + n);
                    System.exit(1);
                }
                if (j > 0) {
                    out.append(',');
                }
                out.append(p);
            }
            out.append('\n');
        }
        System.out.print(out);
    }

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x & 0xff));
        }
        return s.toString();
    }
}
