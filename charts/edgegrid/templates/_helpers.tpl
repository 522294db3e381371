{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "edgegrid.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's objects. */}}
{{- define "edgegrid.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "edgegrid.selectorLabels" -}}
app.kubernetes.io/name: {{ include "edgegrid.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "edgegrid.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "edgegrid.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: broker
{{- end }}

{{- define "edgegrid.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "edgegrid.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret the pod reads its keys and certificates from. */}}
{{- define "edgegrid.secretName" -}}
{{- default (include "edgegrid.fullname" .) .Values.existingSecret.name }}
{{- end }}

{{/* "true" when the HTTPS listener runs. */}}
{{- define "edgegrid.https" -}}
{{- if ne .Values.tlsPolicy "disabled" }}true{{ end }}
{{- end }}

{{/* "true" when the plain HTTP listener runs. */}}
{{- define "edgegrid.http" -}}
{{- if ne .Values.tlsPolicy "strict" }}true{{ end }}
{{- end }}

{{/* "true" when the Secret holds a server certificate and key. */}}
{{- define "edgegrid.hasServerCert" -}}
{{- if .Values.existingSecret.name }}{{ if .Values.existingSecret.hasServerCert }}true{{ end }}
{{- else if .Values.tls.cert }}true{{ end }}
{{- end }}

{{/* "true" when the Secret holds a chain served after the certificate. */}}
{{- define "edgegrid.hasCA" -}}
{{- if .Values.existingSecret.name }}{{ if .Values.existingSecret.hasCA }}true{{ end }}
{{- else if .Values.tls.ca }}true{{ end }}
{{- end }}

{{/* "true" when the Secret holds the client certificate trust bundle. */}}
{{- define "edgegrid.hasClientCA" -}}
{{- if .Values.existingSecret.name }}{{ if .Values.existingSecret.hasClientCA }}true{{ end }}
{{- else if .Values.auth.clientCert.ca }}true{{ end }}
{{- end }}

{{/*
edgegrid.bytes converts a Kubernetes memory quantity (512Mi, 1G, 268435456)
to a number of bytes; "" for an empty quantity. Decimal fractions are not
supported and fail the render.
*/}}
{{- define "edgegrid.bytes" -}}
{{- $q := toString . }}
{{- if $q }}
{{- $m := regexFind "^[0-9]+" $q }}
{{- $suffix := trimPrefix $m $q }}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 }}
{{- if or (not $m) (not (hasKey $units $suffix)) }}
{{- fail (printf "resources.limits.memory: %q is not a memory quantity the chart can read; write it as an integer with an optional suffix (k, M, G, T, Ki, Mi, Gi, Ti), e.g. 512Mi" $q) }}
{{- end }}
{{- mul (int64 $m) (get $units $suffix) }}
{{- end }}
{{- end }}

{{/*
edgegrid.envValue writes a config value as an environment value: whole
numbers without an exponent (YAML numbers arrive as floats), the rest as
text.
*/}}
{{- define "edgegrid.envValue" -}}
{{- if and (kindIs "float64" .) (eq (float64 (int64 .)) .) }}
{{- int64 . | toString | quote }}
{{- else }}
{{- toString . | quote }}
{{- end }}
{{- end }}

{{/* The broker's queue limit, from config or the broker's default. */}}
{{- define "edgegrid.maxQueuedBytes" -}}
{{- if hasKey .Values.config "broker__maxQueuedBytes" }}
{{- int64 (get .Values.config "broker__maxQueuedBytes") }}
{{- else }}268435456{{ end }}
{{- end }}

{{/*
edgegrid.bodyBytes is the memory request bodies being read may hold
together: api__maxBodyBytesInFlight, or the broker's default, a quarter of
broker__maxQueuedBytes and never less than api__maxContentLengthInBytes.
*/}}
{{- define "edgegrid.bodyBytes" -}}
{{- $set := int64 (dig "api__maxBodyBytesInFlight" 0 .Values.config) }}
{{- if gt $set 0 }}{{ $set }}
{{- else }}
{{- $queued := int64 (include "edgegrid.maxQueuedBytes" .) }}
{{- max (div $queued 4) (int64 (dig "api__maxContentLengthInBytes" 1058576 .Values.config)) }}
{{- end }}
{{- end }}

{{/*
edgegrid.receiveAnswerBytes is the memory the answers of :receive calls
being written may hold together. The broker bounds it to about the
request-body budget (docs/pull-delivery.md), so the guard counts as much;
should the bound get a setting of its own, read it here.
*/}}
{{- define "edgegrid.receiveAnswerBytes" -}}
{{- include "edgegrid.bodyBytes" . }}
{{- end }}

{{/* edgegrid.runtimeBytes is the broker's own memory besides what it holds: it idles near 20 MB. */}}
{{- define "edgegrid.runtimeBytes" -}}33554432{{- end }}

{{/*
edgegrid.checkMemory refuses a memory limit whose GOMEMLIMIT (90 % of it)
leaves no room for all the broker may hold at once: the queued events, the
request bodies being read, the receive answers being written, and the
runtime itself.
*/}}
{{- define "edgegrid.checkMemory" -}}
{{- $limit := include "edgegrid.bytes" (dig "limits" "memory" "" .Values.resources) }}
{{- if $limit }}
{{- $queued := int64 (include "edgegrid.maxQueuedBytes" .) }}
{{- $bodies := int64 (include "edgegrid.bodyBytes" .) }}
{{- $answers := int64 (include "edgegrid.receiveAnswerBytes" .) }}
{{- $runtime := int64 (include "edgegrid.runtimeBytes" .) }}
{{- $need := add $queued $bodies $answers $runtime }}
{{- $gomem := div (mul (int64 $limit) 9) 10 }}
{{- if lt $gomem $need }}
{{- $minMi := div (add (div (mul $need 10) 9) 1048575) 1048576 }}
{{- fail (printf "resources.limits.memory (%s bytes) is too small for what the broker may hold at once: GOMEMLIMIT, 90 %% of it, is %d bytes, but the queued events (broker__maxQueuedBytes: %d) + the request bodies being read (api__maxBodyBytesInFlight, by default a quarter of the queue budget: %d) + the receive answers being written (as much as the bodies: %d) + the runtime (%d) need %d. Give at least %dMi, or lower config.broker__maxQueuedBytes." $limit $gomem $queued $bodies $answers $runtime $need $minMi) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
edgegrid.queueSubscriptions lists "topic/name" of each queue subscription
desiredConfig declares, comma-separated. As the broker reads them, an entry
or its deliveryConfiguration may be a JSON string (a module twin's
spelling) and member names match ignoring case.
*/}}
{{- define "edgegrid.queueSubscriptions" -}}
{{- $out := list }}
{{- range $name, $e := (.Values.desiredConfig.eventSubscriptions | default dict) }}
{{- if kindIs "string" $e }}{{ $e = fromJson $e }}{{ end }}
{{- if kindIs "map" $e }}
{{- $dc := dict }}
{{- $topic := "" }}
{{- range $k, $v := $e }}
{{- if eq (lower $k) "deliveryconfiguration" }}{{ $dc = $v }}{{ end }}
{{- if eq (lower $k) "topic" }}{{ $topic = toString $v }}{{ end }}
{{- end }}
{{- if kindIs "string" $dc }}{{ $dc = fromJson $dc }}{{ end }}
{{- if kindIs "map" $dc }}
{{- range $k, $v := $dc }}
{{- if and (eq (lower $k) "deliverymode") (eq (lower (toString $v)) "queue") }}
{{- $out = append $out (printf "%s/%s" $topic $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- join ", " $out }}
{{- end }}

{{/*
edgegrid.checkReplicas refuses more than one replica with declared queue
subscriptions: each replica is an independent broker with its own queues.
*/}}
{{- define "edgegrid.checkReplicas" -}}
{{- $queues := include "edgegrid.queueSubscriptions" . }}
{{- if and (gt (int .Values.replicaCount) 1) $queues }}
{{- fail (printf "replicaCount is %d, but desiredConfig declares the queue subscription(s) %s: each replica is an independent broker with its own queue, so an event published through the Service to one pod can be received only from that pod, and a lock taken on one pod is unknown to the others. Set replicaCount to 1, or install one release per queue consumer group (docs/kubernetes.md)." (int .Values.replicaCount) $queues) }}
{{- end }}
{{- end }}

{{/*
edgegrid.clusterAnswers is "true" when the render talks to a cluster: a
list answers there (empty or not), while a render without one (helm
template, --dry-run=client, GitOps renderers such as Argo CD) gets nothing
from lookup.
*/}}
{{- define "edgegrid.clusterAnswers" -}}
{{- if hasKey (lookup "v1" "ConfigMap" .Release.Namespace "" | default dict) "items" }}true{{ end }}
{{- end }}
