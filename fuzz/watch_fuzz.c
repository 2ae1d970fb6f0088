/*
 * watch_fuzz.c - libFuzzer target for the watch-stream parser and the list
 * decoder: the input is fed to the framer in chunks whose sizes come from
 * the first byte, with a small event limit so the limit path is reached,
 * and decoded as a list. Seeds: fuzz/corpus/watch/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "kube/object.h"
#include "kube/watch_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_event(const struct kube_watch_event *ev, void *arg)
{
	struct kube_meta m;
	if (ev->type != KUBE_EVENT_ERROR && ev->type != KUBE_EVENT_BOOKMARK &&
	    kube_obj_meta(ev->object, &m) != DRAKE_OK)
		abort(); /* the decoder promised a name */
	(*(size_t *)arg)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t chunk = (size_t)(data[0] % 64) + 1;
	const char *s = (const char *)data + 1;
	size_t n = size - 1, events = 0;
	char msg[256];
	struct kube_watch_parser p;
	kube_watch_parser_init(&p, 4096);
	for (size_t off = 0; off < n; off += chunk) {
		size_t len = n - off < chunk ? n - off : chunk;
		if (kube_watch_parser_feed(&p, s + off, len, on_event, &events, msg, sizeof(msg)) !=
		    DRAKE_OK) {
			kube_watch_parser_reset(&p);
			break;
		}
	}
	if (kube_watch_parser_pending(&p) > 4096)
		abort();
	kube_watch_parser_release(&p);
	char rv[KUBE_RV_MAX], cont[256];
	if (kube_list_decode(s, n, on_event, &events, rv, cont, sizeof(cont), msg, sizeof(msg)) ==
	        DRAKE_OK &&
	    !rv[0])
		abort();
	return 0;
}
