{{- define "drake.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "drake.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "drake.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "drake.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "drake.selectorLabels" -}}
app.kubernetes.io/name: {{ include "drake.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: extender
{{- end -}}

{{- define "drake.schedulerSelectorLabels" -}}
app.kubernetes.io/name: {{ include "drake.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: scheduler
{{- end -}}

{{- define "drake.serviceAccountName" -}}
{{- default (include "drake.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "drake.schedulerFullname" -}}
{{- printf "%s-scheduler" (include "drake.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The Secret holding drake's serving certificate (tls.crt, tls.key, ca.crt). */}}
{{- define "drake.tlsSecret" -}}
{{- if eq .Values.tls.source "secret" -}}
{{- required "tls.existingSecret is required when tls.source is secret" .Values.tls.existingSecret -}}
{{- else -}}
{{- printf "%s-tls" (include "drake.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding kube-scheduler's client certificate (mTLS). */}}
{{- define "drake.clientTlsSecret" -}}
{{- if eq .Values.tls.source "secret" -}}
{{- required "tls.existingClientSecret is required when tls.source is secret and tls.clientAuth is true" .Values.tls.existingClientSecret -}}
{{- else -}}
{{- printf "%s-client-tls" (include "drake.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The DNS name kube-scheduler reaches drake by (the certificate's name). */}}
{{- define "drake.serviceHost" -}}
{{- printf "%s.%s.svc" (include "drake.fullname" .) .Release.Namespace -}}
{{- end -}}

{{- define "drake.urlPrefix" -}}
{{- printf "https://%s:%v%s" (include "drake.serviceHost" .) .Values.service.port .Values.flags.prefix -}}
{{- end -}}

{{- define "drake.schedulerTag" -}}
{{- if .Values.scheduler.image.tag -}}
{{- .Values.scheduler.image.tag -}}
{{- else -}}
{{- regexReplaceAll "[-+].*$" .Capabilities.KubeVersion.Version "" -}}
{{- end -}}
{{- end -}}

{{/*
The extender entry of a KubeSchedulerConfiguration (config/drake-extender.yaml.tmpl
documents every line). Called with a dict: root, caFile/certFile/keyFile
(paths, secondScheduler) or caData (base64, extenderOnly).
*/}}
{{- define "drake.extender" -}}
{{- $v := .root.Values -}}
- urlPrefix: {{ include "drake.urlPrefix" .root | quote }}
  filterVerb: filter
  {{- if eq (include "drake.prioritize" .root) "true" }}
  prioritizeVerb: prioritize
  weight: {{ $v.prioritize.weight }}
  {{- end }}
  bindVerb: bind
  preemptVerb: preempt
  nodeCacheCapable: true
  enableHTTPS: true
  tlsConfig:
    insecure: false
    serverName: {{ include "drake.serviceHost" .root | quote }}
    {{- if .caData }}
    caData: {{ .caData | quote }}
    {{- else }}
    caFile: {{ .caFile | quote }}
    {{- end }}
    {{- if $v.tls.clientAuth }}
    {{- if .caData }}
    certFile: /path/to/drake-client/tls.crt  # from Secret {{ include "drake.clientTlsSecret" .root }}
    keyFile: /path/to/drake-client/tls.key
    {{- else }}
    certFile: {{ .certFile | quote }}
    keyFile: {{ .keyFile | quote }}
    {{- end }}
    {{- end }}
  httpTimeout: {{ $v.scheduler.httpTimeout }}
  ignorable: false
  {{- if $v.gangOnly }}
  managedResources:
  - name: {{ $v.gangResource }}
    ignoredByScheduler: true
  {{- end }}
{{- end -}}

{{/*
The generated TLS material (tls.source generate), as YAML of base64 strings:
ca, cakey, crt, key, ccrt, ckey. An earlier install's Secrets are reused
(lookup), so an upgrade keeps the CA kube-scheduler trusts; lookup answers
nothing under `helm template`. Computed once per render and kept in
.Values._drakeTLS so that tls.yaml and NOTES.txt print the same CA.
*/}}
{{- define "drake.generatedTLS" -}}
{{- if not (hasKey .Values "_drakeTLS") -}}
{{- $full := include "drake.fullname" . -}}
{{- $days := int .Values.tls.generate.days -}}
{{- $srv := lookup "v1" "Secret" .Release.Namespace (printf "%s-tls" $full) -}}
{{- $cli := lookup "v1" "Secret" .Release.Namespace (printf "%s-client-tls" $full) -}}
{{- $r := dict -}}
{{- if and $srv $srv.data (hasKey $srv.data "ca.key") -}}
{{- $_ := set $r "ca" (index $srv.data "ca.crt") -}}
{{- $_ := set $r "cakey" (index $srv.data "ca.key") -}}
{{- $_ := set $r "crt" (index $srv.data "tls.crt") -}}
{{- $_ := set $r "key" (index $srv.data "tls.key") -}}
{{- if and $cli $cli.data -}}
{{- $_ := set $r "ccrt" (index $cli.data "tls.crt") -}}
{{- $_ := set $r "ckey" (index $cli.data "tls.key") -}}
{{- else -}}
{{- $caObj := buildCustomCert $r.ca $r.cakey -}}
{{- $c := genSignedCert "kube-scheduler" nil nil $days $caObj -}}
{{- $_ := set $r "ccrt" ($c.Cert | b64enc) -}}
{{- $_ := set $r "ckey" ($c.Key | b64enc) -}}
{{- end -}}
{{- else -}}
{{- $caObj := genCA (printf "%s-ca" $full) $days -}}
{{- $host := include "drake.serviceHost" . -}}
{{- $dns := list $full (printf "%s.%s" $full .Release.Namespace) $host (printf "%s.cluster.local" $host) -}}
{{- $s := genSignedCert $host nil $dns $days $caObj -}}
{{- $c := genSignedCert "kube-scheduler" nil nil $days $caObj -}}
{{- $_ := set $r "ca" ($caObj.Cert | b64enc) -}}
{{- $_ := set $r "cakey" ($caObj.Key | b64enc) -}}
{{- $_ := set $r "crt" ($s.Cert | b64enc) -}}
{{- $_ := set $r "key" ($s.Key | b64enc) -}}
{{- $_ := set $r "ccrt" ($c.Cert | b64enc) -}}
{{- $_ := set $r "ckey" ($c.Key | b64enc) -}}
{{- end -}}
{{- $_ := set .Values "_drakeTLS" $r -}}
{{- end -}}
{{- toYaml .Values._drakeTLS -}}
{{- end -}}

{{/*
Whether drake scores pods on prioritize: prioritize.enabled, or when it is
null, simple mode (gangOnly false). drake's score reads the node cache its
gang controller keeps, so flags.gang "false" turns the default off and
refuses prioritize.enabled true. "true" or "false".
*/}}
{{- define "drake.prioritize" -}}
{{- $e := .Values.prioritize.enabled -}}
{{- $gang := ne (toString .Values.flags.gang) "false" -}}
{{- if kindIs "invalid" $e -}}
{{- ternary "true" "false" (and $gang (not .Values.gangOnly)) -}}
{{- else if and $e (not $gang) -}}
{{- fail "prioritize.enabled true needs drake's gang controller (flags.gang must not be false): the score reads its node cache" -}}
{{- else -}}
{{- ternary "true" "false" $e -}}
{{- end -}}
{{- end -}}
