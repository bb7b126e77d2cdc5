"""Confluent's Python Protobuf serializer and deserializer as an oracle.

Reads one JSON request a line on stdin, answers one JSON line on stdout:

request:  {"files": [base64 FileDescriptorProto, dependencies first],
           "message": full name, "payload": hex of the message's encoding,
           "ours": hex of our frame after the 5-byte prefix (indexes + payload),
           "topic": topic}
answer:   {"theirs": hex of Confluent's frame after the 5-byte prefix,
           "reencoded": hex of Confluent's encoding of the message parsed from "payload",
           "decoded_ours": hex of Confluent's encoding of what it decoded from our frame,
           "equal": whether that message equals the one parsed from "payload",
           "references": [[name, subject, version], ...] of the registered root,
           "subjects": the subjects Confluent registered, sorted}
           or {"error": "..."}

Each request gets its own in-process mock registry (mock://).
"""

import base64
import json
import sys
import traceback

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message_factory import GetMessageClass

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext


def answer(request, n):
    pool = descriptor_pool.DescriptorPool()
    for f in request["files"]:
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(f)))
    cls = GetMessageClass(pool.FindMessageTypeByName(request["message"]))
    msg = cls.FromString(bytes.fromhex(request["payload"]))

    client = SchemaRegistryClient.new_client({"url": "mock://oracle-%d" % n})
    ctx = SerializationContext(request["topic"], MessageField.VALUE)
    serializer = ProtobufSerializer(cls, client, {"subject.name.strategy.type": "TOPIC"})
    theirs = serializer(msg, ctx)
    assert theirs[0] == 0, theirs[:5]

    ours = theirs[:5] + bytes.fromhex(request["ours"])
    deserializer = ProtobufDeserializer(cls, {"subject.name.strategy.type": "TOPIC"}, client)
    decoded = deserializer(ours, ctx)

    root = client.get_latest_version(request["topic"] + "-value")
    return {
        "theirs": theirs[5:].hex(),
        "reencoded": msg.SerializeToString().hex(),
        "decoded_ours": decoded.SerializeToString().hex(),
        "equal": decoded == msg,
        "references": [[r.name, r.subject, r.version] for r in (root.schema.references or [])],
        "subjects": sorted(client.get_subjects()),
    }


def main():
    for n, line in enumerate(sys.stdin):
        try:
            out = answer(json.loads(line), n)
        except Exception:
            out = {"error": traceback.format_exc()}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
