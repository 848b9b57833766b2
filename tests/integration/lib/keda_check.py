#!/usr/bin/python3
"""Checks keda.yaml against a JSON schema of KEDA's ScaledObject (keda.sh/v1alpha1), written
here from the fields KEDA documents for a ScaledObject and its prometheus trigger: spec.
scaleTargetRef (name required; apiVersion, kind), minReplicaCount / maxReplicaCount (integers),
triggers (type; metricType one of AverageValue, Value, Utilization; metadata a map of strings
with the prometheus trigger's required serverAddress, query and threshold). Unknown fields are
refused, as KEDA's CRD does for spec. Then the numbers: the threshold against EXPECTED (a
quantity), the bounds against MIN and MAX when given.

    /usr/bin/python3 keda_check.py keda.yaml [THRESHOLD MIN MAX]
"""

import sys

import jsonschema
import yaml

STRING = {"type": "string", "minLength": 1}
SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "kind": {"const": "ScaledObject"},
        "metadata": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"},
                "namespace": STRING,
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["scaleTargetRef", "triggers"],
            "properties": {
                "scaleTargetRef": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["name"],
                    "properties": {"apiVersion": STRING, "kind": STRING, "name": STRING,
                                   "envSourceContainerName": STRING},
                },
                "pollingInterval": {"type": "integer", "minimum": 1},
                "cooldownPeriod": {"type": "integer", "minimum": 0},
                "initialCooldownPeriod": {"type": "integer", "minimum": 0},
                "idleReplicaCount": {"type": "integer", "minimum": 0},
                "minReplicaCount": {"type": "integer", "minimum": 0},
                "maxReplicaCount": {"type": "integer", "minimum": 1},
                "fallback": {"type": "object"},
                "advanced": {"type": "object"},
                "triggers": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["type", "metadata"],
                        "properties": {
                            "type": STRING,
                            "name": STRING,
                            "useCachedMetrics": {"type": "boolean"},
                            "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                            "authenticationRef": {"type": "object"},
                            "metadata": {"type": "object",
                                         "additionalProperties": {"type": "string"}},
                        },
                        "if": {"properties": {"type": {"const": "prometheus"}}},
                        "then": {"properties": {"metadata": {
                            "required": ["serverAddress", "query", "threshold"],
                            "properties": {
                                "serverAddress": {"type": "string", "pattern": "^https?://"},
                                "query": STRING,
                                "threshold": {"type": "string",
                                              "pattern": "^[0-9]+(\\.[0-9]+)?$"},
                            }}}},
                    },
                },
            },
        },
    },
}


def main():
    obj = yaml.safe_load(open(sys.argv[1]))
    jsonschema.validate(obj, SCHEMA)
    spec = obj["spec"]
    if spec["minReplicaCount"] > spec["maxReplicaCount"]:
        sys.exit("minReplicaCount above maxReplicaCount")
    if len(sys.argv) >= 3:
        got = float(spec["triggers"][0]["metadata"]["threshold"])
        if abs(got - float(sys.argv[2])) > 1e-9:
            sys.exit(f"threshold {got} != {sys.argv[2]}")
    if len(sys.argv) >= 5 and (spec["minReplicaCount"], spec["maxReplicaCount"]) != (
            int(sys.argv[3]), int(sys.argv[4])):
        sys.exit(f"bounds {spec['minReplicaCount']}..{spec['maxReplicaCount']} != "
                 f"{sys.argv[3]}..{sys.argv[4]}")
    print("keda.yaml valid:", spec["triggers"][0]["metadata"]["threshold"], "req/s per pod,",
          spec["minReplicaCount"], "to", spec["maxReplicaCount"], "replicas")


if __name__ == "__main__":
    main()
