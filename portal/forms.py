from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm

from portal.models import Team


class SignupForm(UserCreationForm):
    email = forms.EmailField(required=True, help_text="Used for password resets only.")

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def clean_email(self):
        email = self.cleaned_data["email"].strip().lower()
        if get_user_model().objects.filter(email__iexact=email).exists():
            raise forms.ValidationError("An account with this e-mail address already exists.")
        return email


class TeamForm(forms.ModelForm):
    class Meta:
        model = Team
        fields = ("name", "description")

    def clean_name(self):
        from django.utils.text import slugify
        name = self.cleaned_data["name"].strip()
        if not slugify(name):
            raise forms.ValidationError("The name needs at least one letter or digit.")
        if Team.objects.filter(slug=slugify(name)[:90]).exists():
            raise forms.ValidationError("A team with this name already exists.")
        return name


class JoinTeamForm(forms.Form):
    code = forms.CharField(max_length=32, label="Join code")

    def clean_code(self):
        code = self.cleaned_data["code"].strip()
        team = Team.objects.filter(join_code=code).first()
        if team is None:
            raise forms.ValidationError("No team has this join code (it may have been rotated).")
        self.team = team
        return code


class TokenForm(forms.Form):
    name = forms.CharField(max_length=80, help_text="What uses it, e.g. 'autocomp-runner'.")
