"""cluster.yaml to a typed, validated, frozen cluster.

Model, YAML source lines, validation rules, the topology plan, thresholds, hardware facts and
the fault registry.
"""
