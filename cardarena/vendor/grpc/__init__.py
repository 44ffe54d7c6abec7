"""Generated from proto_vendor/ by scripts/gen_proto.sh; do not edit."""
