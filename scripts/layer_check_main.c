/*
 * layer_check_main.c -- the empty program the layer check links each
 * layer's library into (scripts/check-layer.sh): with --whole-archive every
 * object of the layer is in, so each of its references must be met by the
 * layers under it or the outside libraries.
 */
int main(void) { return 0; }
