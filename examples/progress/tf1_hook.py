"""Report training progress to drake from TensorFlow 1.x (tf.train / tf.estimator).

    hooks=[DrakeProgressHook(metric_tensor=accuracy, metric="accuracy",
                             total_steps=10000)]

POSTs {"step", "value", "metric", "totalSteps"} to $DRAKE_PROGRESS_URL as the
pod its projected service-account token names. Standard library only; a
failed report is printed and training goes on.
"""
import json, os, ssl, time, urllib.error, urllib.request

import tensorflow as tf

SA = "/var/run/secrets/kubernetes.io/serviceaccount"


def report(step, value, metric, total_steps=None):
    url = os.environ.get("DRAKE_PROGRESS_URL")
    if not url:
        return
    body = {"step": int(step), "value": float(value), "metric": metric}
    if total_steps:
        body["totalSteps"] = int(total_steps)
    with open(os.environ.get("DRAKE_PROGRESS_TOKEN_FILE", SA + "/token")) as f:
        token = f.read().strip()  # re-read: the kubelet rotates it
    pem = os.environ.get("DRAKE_PROGRESS_CA_PEM")  # drake's CA, written by its controller
    ctx = (ssl.create_default_context(cadata=pem) if pem else
           ssl.create_default_context(cafile=os.environ.get("DRAKE_PROGRESS_CA", SA + "/ca.crt")))
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, context=ctx, timeout=5).close()
    except urllib.error.HTTPError as e:  # 4xx/5xx: drake says why
        print("drake refused progress (HTTP %d): %s" % (e.code, e.read().decode(errors="replace")))
    except (OSError, ValueError) as e:
        print("drake unreachable: %s" % e)


class DrakeProgressHook(tf.train.SessionRunHook):
    def __init__(self, metric_tensor, metric="accuracy", total_steps=None, every_secs=10):
        self._value, self._metric = metric_tensor, metric
        self._total, self._every, self._last = total_steps, every_secs, 0.0

    def begin(self):
        self._step = tf.train.get_or_create_global_step()

    def before_run(self, run_context):
        return tf.train.SessionRunArgs([self._step, self._value])

    def after_run(self, run_context, run_values):
        now = time.monotonic()
        if now - self._last >= self._every:  # drake allows 1 report a second
            self._last = now
            step, value = run_values.results
            report(step, value, self._metric, self._total)
