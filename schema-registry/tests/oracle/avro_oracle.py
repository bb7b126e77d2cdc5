"""Confluent's Python AvroSerializer/AvroDeserializer as an oracle.

Reads JSON lines on stdin, one vector each:
  {"schema": text, "refs": [[name, text], ...], "value": tagged JSON,
   "ours": hex payload (after the 5-byte frame)}
Writes one JSON line per vector:
  {"theirs": hex payload or null, "ours_decodes": bool, "error": str or null}
Tagged JSON: {"$bytes": hex}, {"$decimal": "1.23"}, {"$map": [[k, v], ...]}.
The registry is Confluent's in-process mock (mock://): no server.
"""
import decimal
import json
import sys

from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext


def untag(v):
    if isinstance(v, list):
        return [untag(x) for x in v]
    if isinstance(v, dict):
        if "$bytes" in v:
            return bytes.fromhex(v["$bytes"])
        if "$decimal" in v:
            return decimal.Decimal(v["$decimal"])
        if "$map" in v:
            return {k: untag(x) for k, x in v["$map"]}
        return {k: untag(x) for k, x in v.items()}
    return v


def main():
    client = SchemaRegistryClient.new_client({"url": "mock://"})
    for n, line in enumerate(sys.stdin):
        vec = json.loads(line)
        out = {"theirs": None, "ours_decodes": False, "error": None}
        try:
            topic = "t%d" % n
            refs = []
            for name, text in vec.get("refs", []):
                client.register_schema(name, Schema(text, "AVRO"))
                refs.append(SchemaReference(name, name, 1))
            schema = Schema(vec["schema"], "AVRO", refs)
            ser = AvroSerializer(client, schema, conf={"auto.register.schemas": True})
            ctx = SerializationContext(topic, MessageField.VALUE)
            framed = ser(untag(vec["value"]), ctx)
            out["theirs"] = framed[5:].hex()
            de = AvroDeserializer(client)
            theirs_back = de(framed, ctx)
            ours_back = de(framed[:5] + bytes.fromhex(vec["ours"]), ctx)
            out["ours_decodes"] = ours_back == theirs_back
        except Exception as e:  # reported to the Rust test, which fails
            out["error"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(out), flush=True)


main()
