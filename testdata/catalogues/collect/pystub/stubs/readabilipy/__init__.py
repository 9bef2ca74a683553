from . import simple_json
