/* api_body_fuzz.c - the progress and migration API's parsers: the bodies
 * callers POST, and the TokenReview and SubjectAccessReview answers drake
 * reads (and the review it builds from a decoded TokenReview). */
#include <stdint.h>
#include <stdlib.h>

#include "extender/api_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	char msg[256], reason[256];
	struct api_progress_body p;
	(void)api_progress_decode(s, size, &p, msg, sizeof(msg));
	struct api_migration_body m;
	(void)api_migration_decode(s, size, &m, msg, sizeof(msg));
	struct api_token_review r;
	if (api_token_review_decode(s, size, NULL, &r, msg, sizeof(msg)) == DRAKE_OK &&
	    r.authenticated) {
		struct api_access a = {"create", "kubeflow.org", "tfjobs", "migrations", "ml"};
		free(api_access_review_encode(&r, &a));
	}
	api_token_review_release(&r);
	bool allowed;
	(void)api_access_review_decode(s, size, &allowed, reason, sizeof(reason), msg, sizeof(msg));
	(void)api_error_message(s, size, reason, sizeof(reason));
	return 0;
}
