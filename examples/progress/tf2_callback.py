"""Report training progress to drake from TensorFlow 2.x Keras.

    model.fit(..., callbacks=[DrakeProgress(metric="accuracy", total_steps=10000)])

Every `every_secs` it POSTs the global step (batches trained so far) and
logs[metric] ("accuracy" or "loss", as Keras names them) to
$DRAKE_PROGRESS_URL, as the pod its projected service-account token names.
Standard library only; a failed report is printed and training goes on.
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


class DrakeProgress(tf.keras.callbacks.Callback):
    def __init__(self, metric="accuracy", total_steps=None, every_secs=10):
        super().__init__()
        self.metric, self.total, self.every, self.last = metric, total_steps, every_secs, 0.0

    def on_train_batch_end(self, batch, logs=None):
        now = time.monotonic()
        value = (logs or {}).get(self.metric)
        if value is None or now - self.last < self.every:  # drake allows 1 a second
            return
        self.last = now
        step = int(self.model.optimizer.iterations.numpy())  # global step
        report(step, value, "loss" if self.metric.endswith("loss") else "accuracy", self.total)
