// Produces keyed records with the Java KafkaProducer and its default
// partitioner, printing where each one landed; used by
// tests/tests/producer_partitioner_java.rs to check that kafka-producer's
// DefaultPartitioner puts every key in the same partition.
//
// Run (Java 11+ single-file source launch):
//   java -cp "$HOME/.cache/kafka-eos/kafka-4.4.0/libs/*" \
//       tests/java/KeyedProduce.java BOOTSTRAP TOPIC COUNT
//
// Record i has value "value-i" and a key that cycles through ASCII strings,
// fixed random bytes (java.util.Random seed 480), UTF-8 multi-byte text and,
// once, the empty key. Output, one line per record in send order:
//   <key hex, "-" when empty> <TAB> <partition> <TAB> <offset>
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class KeyedProduce {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int count = Integer.parseInt(args[2]);

        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        // partitioner.class deliberately unset: the built-in partitioner.

        Random rnd = new Random(480L);
        List<byte[]> keys = new ArrayList<>();
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < count; i++) {
                byte[] key;
                if (i == 7) {
                    key = new byte[0];
                } else if (i % 3 == 0) {
                    key = ("user-" + i).getBytes(StandardCharsets.UTF_8);
                } else if (i % 3 == 1) {
                    key = new byte[1 + rnd.nextInt(40)];
                    rnd.nextBytes(key);
                } else {
                    key = ("cl\u00e9-" + i + "-\u65e5\u672c-\uD83E\uDD80").getBytes(StandardCharsets.UTF_8);
                }
                byte[] value = ("value-" + i).getBytes(StandardCharsets.UTF_8);
                keys.add(key);
                sent.add(producer.send(new ProducerRecord<>(topic, key, value)));
            }
            producer.flush();
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < count; i++) {
                RecordMetadata md = sent.get(i).get();
                byte[] k = keys.get(i);
                out.append(k.length == 0 ? "-" : hex(k))
                    .append('\t').append(md.partition())
                    .append('\t').append(md.offset()).append('\n');
            }
            System.out.print(out);
        }
    }

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x & 0xff));
        }
        return s.toString();
    }
}
