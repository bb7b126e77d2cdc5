"""Writes records with Confluent's Python serializers (the oracle) to Kafka.

Arguments: bootstrap servers, registry URL, topic, format (avro, json or
protobuf-free formats only), schema file. Reads one JSON document per line on
stdin and produces each as a value serialized by Confluent's serializer,
through the given registry, then flushes. Loopback only.
"""
import json
import sys

from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext


def main():
    bootstrap, url, topic, fmt, schema_file = sys.argv[1:6]
    # A request timeout (the client's default is none: one answer lost
    # under load held the oracle forever); a timed-out request is retried.
    client = SchemaRegistryClient({"url": url, "timeout": 20})
    with open(schema_file) as f:
        schema = f.read()
    if fmt == "avro":
        serializer = AvroSerializer(client, schema)
    elif fmt == "json":
        serializer = JSONSerializer(schema, client)
    else:
        raise SystemExit("unknown format %r" % fmt)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    ctx = SerializationContext(topic, MessageField.VALUE)
    for line in sys.stdin:
        producer.produce(topic, value=serializer(json.loads(line), ctx), partition=0)
    if producer.flush(60) != 0:
        raise SystemExit("records left undelivered")


if __name__ == "__main__":
    main()
