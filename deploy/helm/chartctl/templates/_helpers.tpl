{{/* Chart name, truncated to the 63 characters a label allows. */}}
{{- define "chartctl.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name. */}}
{{- define "chartctl.fullname" -}}
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

{{- define "chartctl.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "chartctl.selectorLabels" -}}
app.kubernetes.io/name: {{ include "chartctl.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "chartctl.labels" -}}
helm.sh/chart: {{ include "chartctl.chart" . }}
{{ include "chartctl.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "chartctl.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "chartctl.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* scale-out mode: more than one replica. */}}
{{- define "chartctl.scaleOut" -}}
{{- if gt (int .Values.replicaCount) 1 }}true{{ end }}
{{- end }}

{{- define "chartctl.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Stops rendering when the values cannot work. */}}
{{- define "chartctl.validate" -}}
{{- if lt (int .Values.replicaCount) 1 }}
{{- fail "replicaCount must be at least 1" }}
{{- end }}
{{- if include "chartctl.scaleOut" . }}
{{- if not .Values.scaleOut.existingSecret }}
{{- fail "replicaCount > 1 needs scaleOut.existingSecret: a Secret with the PostgreSQL DSN (key database), the S3 blob store URL (key blob-store) and the shared secrets key (key secrets-key)" }}
{{- end }}
{{- if not .Values.admin.existingSecret }}
{{- fail "replicaCount > 1 needs admin.existingSecret: the first admin's password comes from a Secret because replicas share no disk" }}
{{- end }}
{{- end }}
{{- $fromValues := dict "log-format" "logFormat" "admin-email" "admin.email" "base-url" "baseURL" "index-format" "indexFormat" }}
{{- range $k, $v := .Values.config }}
{{- if has $k (list "addr" "data" "config" "print-config") }}
{{- fail (printf "config.%s is set by the chart; remove it from config" $k) }}
{{- end }}
{{- with get $fromValues $k }}
{{- fail (printf "config.%s is written from the value %s (a key twice in config.yaml stops the server); set %s instead" $k . .) }}
{{- end }}
{{- end }}
{{- end }}
