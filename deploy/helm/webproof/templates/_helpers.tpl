{{/* Names and labels shared by every object of the chart. */}}

{{- define "webproof.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release-qualified name, at most 63 characters (a DNS label). */}}
{{- define "webproof.fullname" -}}
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

{{- define "webproof.selectorLabels" -}}
app.kubernetes.io/name: {{ include "webproof.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "webproof.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "webproof.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "webproof.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "webproof.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Seconds the kubelet waits before SIGKILL: the whole drain plus a margin. */}}
{{- define "webproof.terminationGrace" -}}
{{- if .Values.terminationGracePeriodSeconds -}}
{{- .Values.terminationGracePeriodSeconds -}}
{{- else -}}
{{- add .Values.verifier.drainDelaySecs .Values.verifier.shutdownGraceSecs 15 -}}
{{- end -}}
{{- end -}}

{{/*
Refuse combinations that would install but not work; each message says
what to change.
*/}}
{{- define "webproof.validate" -}}
{{- $backend := .Values.results.backend -}}
{{- if not (has $backend (list "none" "sqlite" "postgres")) -}}
{{- fail (printf "results.backend %q: expected none, sqlite or postgres" $backend) -}}
{{- end -}}
{{- if and (eq $backend "sqlite") (or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled) -}}
{{- fail "results.backend sqlite keeps results in each pod's own file: use one replica without autoscaling, or results.backend postgres" -}}
{{- end -}}
{{- if and (eq $backend "postgres") (not .Values.results.postgres.existingSecret) -}}
{{- fail "results.backend postgres needs results.postgres.existingSecret (a Secret with the database URL)" -}}
{{- end -}}
{{- if and .Values.webhooks (eq $backend "none") -}}
{{- fail "webhooks need stored results: set results.backend to postgres (or sqlite for one replica)" -}}
{{- end -}}
{{- if le (int .Values.verifier.maxSessions) 0 -}}
{{- fail "verifier.maxSessions must be at least 1" -}}
{{- end -}}
{{- if and .Values.terminationGracePeriodSeconds (le (int .Values.terminationGracePeriodSeconds) (int (add .Values.verifier.drainDelaySecs .Values.verifier.shutdownGraceSecs))) -}}
{{- fail "terminationGracePeriodSeconds must exceed verifier.drainDelaySecs + verifier.shutdownGraceSecs, or the kubelet kills sessions mid-proof" -}}
{{- end -}}
{{- end -}}
