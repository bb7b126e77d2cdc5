// Opens a transaction, writes COUNT records round-robin to partitions 0 and 1
// of TOPIC (values "TAG-i"), flushes (every record acknowledged, every
// partition registered), prints "READY" and then blocks forever without
// committing: the Rust test SIGKILLs it and finishes the transaction through
// the resume path (or leaves it to time out / be aborted).
//
// Usage: java -cp '<kafka libs>/*' PreparedTxnWriter.java BOOTSTRAP TOPIC TXN_ID TXN_TIMEOUT_MS TAG COUNT

import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class PreparedTxnWriter {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        String txnId = args[2];
        String timeoutMs = args[3];
        String tag = args[4];
        int count = Integer.parseInt(args[5]);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, timeoutMs);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        KafkaProducer<String, String> producer = new KafkaProducer<>(p);
        producer.initTransactions();
        producer.beginTransaction();
        for (int i = 0; i < count; i++) {
            producer.send(new ProducerRecord<>(topic, i % 2, tag + "-k" + i, tag + "-" + i)).get();
        }
        producer.flush();
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
