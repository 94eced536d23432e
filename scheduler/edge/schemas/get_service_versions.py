"""get_service_versions (call, since 1.3): no arguments."""

V1_3 = {'type': 'object', 'properties': {}}

SCHEMAS = {'1.3': V1_3}
