// Writes transactions over partitions 0 and 1 of a topic with two
// transactional producers whose transactions interleave in the log:
// producer A aborts every 3rd transaction (t % 3 == 2), producer B commits
// every one. Values name the producer, the transaction and its outcome.
// A's committed transactions also commit offsets for a consumer group
// (sendOffsetsToTransaction); its aborted ones send offsets that must never
// become visible.
//
// Optionally (5th argument, a file path) it then opens one more transaction
// on A, writes to both partitions, prints "HOLDING" and keeps it open until
// that file exists, then aborts it.
//
// Usage: java -cp '<kafka libs>/*' AbortingProducer.java BOOTSTRAP TOPIC TXNS GROUP [RELEASE_FILE]

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

public class AbortingProducer {
    static final int PER_TXN = 4;

    static KafkaProducer<String, String> producer(String bootstrap, String txnId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        KafkaProducer<String, String> producer = new KafkaProducer<>(p);
        producer.initTransactions();
        return producer;
    }

    static void send(KafkaProducer<String, String> producer, String topic, String who, int t, String outcome) {
        for (int i = 0; i < PER_TXN; i++) {
            int partition = i % 2;
            ProducerRecord<String, String> r = new ProducerRecord<>(
                topic, partition, who + "-" + t + "-" + i, who + ";txn=" + t + ";i=" + i + ";" + outcome);
            r.headers().add("txn", Integer.toString(t).getBytes(StandardCharsets.UTF_8));
            r.headers().add("producer", who.getBytes(StandardCharsets.UTF_8));
            producer.send(r);
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int txns = Integer.parseInt(args[2]);
        String group = args[3];
        Path release = args.length > 4 ? Path.of(args[4]) : null;
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        try (KafkaProducer<String, String> a = producer(bootstrap, "aborting-producer-a");
             KafkaProducer<String, String> b = producer(bootstrap, "aborting-producer-b")) {
            for (int t = 0; t < txns; t++) {
                boolean abort = t % 3 == 2;
                a.beginTransaction();
                b.beginTransaction();
                // Interleave the two producers' batches in the log.
                send(a, topic, "A", t, abort ? "abort" : "commit");
                a.flush();
                send(b, topic, "B", t, "commit");
                b.flush();
                send(a, topic, "A2", t, abort ? "abort" : "commit");
                a.flush();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                offsets.put(p0, new OffsetAndMetadata(abort ? 1_000_000L + t : t + 1, "txn " + t));
                offsets.put(p1, new OffsetAndMetadata(abort ? 2_000_000L + t : 2L * (t + 1), "txn " + t));
                a.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(group));
                if (abort) {
                    a.abortTransaction();
                } else {
                    a.commitTransaction();
                }
                b.commitTransaction();
            }
            if (release != null) {
                a.beginTransaction();
                send(a, topic, "HELD", txns, "abort");
                a.flush();
                System.out.println("HOLDING");
                System.out.flush();
                while (!Files.exists(release)) {
                    Thread.sleep(20);
                }
                a.abortTransaction();
            }
        }
        System.out.println("DONE " + txns);
    }
}
