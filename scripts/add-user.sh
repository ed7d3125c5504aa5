#!/usr/bin/env bash
# Add a person to a tenant in the stack's Cognito user pool, and print how they get a token.
#   scripts/add-user.sh STACK_NAME EMAIL TENANT [REGION]
# Self sign-up is off (template.yaml): an administrator makes each user and sets custom:tenant, which the
# API reads as the caller's tenant and no client may write. The password is set as permanent, so the
# first sign-in is not a forced password change; it is read from SEMFS_USER_PASSWORD, or asked for.
# SEMFS_USER_GROUPS (comma-separated, e.g. "admin,hr") puts them in those Cognito groups, made if new: the
# token's cognito:groups are who files are shared with, and "admin" makes them an admin of their tenant.
set -euo pipefail
usage="usage: scripts/add-user.sh STACK_NAME EMAIL TENANT [REGION]"
stack="${1:?$usage}"
email="${2:?$usage}"
tenant="${3:?$usage}"
region="${4:-${AWS_REGION:-$(aws configure get region)}}"
if ! [[ "$tenant" =~ ^[a-z0-9][a-z0-9_-]{0,62}$ ]]; then
  echo "tenant '$tenant': use 1-63 lower-case letters, digits, '-' or '_', starting with a letter or digit" >&2
  exit 2
fi
output() {
  aws cloudformation describe-stacks --stack-name "$stack" --region "$region" \
    --query "Stacks[0].Outputs[?OutputKey=='$1'].OutputValue" --output text
}
pool="$(output UserPoolId)"
client="$(output CliClientId)"  # the client that takes USER_PASSWORD_AUTH (the web page's does not)
if [ -z "$pool" ] || [ "$pool" = "None" ]; then
  echo "stack '$stack' has no Cognito user pool (JwtIssuer is set): add users in your identity provider" >&2
  exit 1
fi
password="${SEMFS_USER_PASSWORD:-}"
if [ -z "$password" ]; then
  read -r -s -p "password for $email (12+ characters, upper, lower, digit): " password
  echo
fi
aws cognito-idp admin-create-user --region "$region" --user-pool-id "$pool" --username "$email" \
  --user-attributes Name=email,Value="$email" Name=email_verified,Value=true Name=custom:tenant,Value="$tenant" \
  --message-action SUPPRESS >/dev/null
aws cognito-idp admin-set-user-password --region "$region" --user-pool-id "$pool" --username "$email" \
  --password "$password" --permanent
IFS=',' read -r -a groups <<< "${SEMFS_USER_GROUPS:-}"
for group in "${groups[@]}"; do
  [ -n "$group" ] || continue
  aws cognito-idp create-group --region "$region" --user-pool-id "$pool" --group-name "$group" >/dev/null 2>&1 || true
  aws cognito-idp admin-add-user-to-group --region "$region" --user-pool-id "$pool" --username "$email" \
    --group-name "$group"
done
echo "added $email to tenant $tenant${SEMFS_USER_GROUPS:+ (groups: $SEMFS_USER_GROUPS)}."
if [ -z "$client" ] || [ "$client" = "None" ]; then
  echo "(the stack has no CLI client, CliPasswordSignIn=false: sign in on the web page)"
  exit 0
fi
echo "A token (valid for an hour) for the API:"
echo "  ID_TOKEN=\$(aws cognito-idp initiate-auth --region $region --client-id $client \\"
echo "    --auth-flow USER_PASSWORD_AUTH --auth-parameters USERNAME=$email,PASSWORD='…' \\"
echo "    --query AuthenticationResult.IdToken --output text)"
echo "  curl -H \"Authorization: Bearer \$ID_TOKEN\" -d '{\"query\": \"payment terms\"}' \"\$(aws cloudformation \\"
echo "    describe-stacks --stack-name $stack --region $region --query \"Stacks[0].Outputs[?OutputKey=='ApiUrl'].OutputValue\" --output text)/search\""
