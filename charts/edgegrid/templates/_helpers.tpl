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
