"""Generated from proto/ by scripts/gen_proto.sh; do not edit."""
